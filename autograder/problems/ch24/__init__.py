"""Chapter 24 (GPU MODE track: softmax): a row softmax y[r, j] = exp(x[r, j] − m_r) / Σ_k
exp(x[r, k] − m_r), m_r the row's maximum, over float32 rows of 1 to 65,536 columns; written
online (Milakov and Gimelshein, 2018) one thread per row (24.1), then one warp per row with the
lanes' partial pairs merged by shuffles (24.2, timed on a GPU against the course's kernel and a
copy of the same bytes); the error bound the checks use, computed by the learner (24.3); and the
same softmax in Triton, one program per row with the row in one block (24.4, a ``@triton.jit``
kernel and its launcher, timed on a GPU against the course's Triton kernel). Importing the
package never imports Triton: only the Triton reference does, when it is asked for.

The rule for masked entries: an entry of −inf (an attention mask) contributes exp(−inf) = 0, and a
row whose entries are all −inf, which has no softmax, is set to 0 everywhere (a fully masked
query attends to nothing). The inputs hold finite values up to |x| ≈ 10^4 and −inf, never +inf or
NaN.

Tolerance: an error bound for correct float32 code, against the float64 softmax
----------------------------------------------------------------------------
u = 2^-24. Write t_k = m − x_k ≥ 0 (the spread of term k), e_k = exp(−t_k), d = Σ e_k (≥ 1, the
maximum's own term is 1), y_j = e_j / d. The maximum is exact (a comparison rounds nothing).

* An exponential: CUDA's expf (what ``math.exp`` on a float32 compiles to without fast math) is
  within 2 ulp, a relative error of at most 2 · 2^-23 = 4u; its argument is a rounded
  difference, fl(a − b) = (a − b)(1 + δ), so exp sees an absolute error of at most |a − b|·u,
  which multiplies the result by exp(±|a − b|·u).
* The online sum: term k enters d as exp(x_k − m_e) (m_e the running maximum then), and every
  later step may rescale it, d ← d·exp(m_old − m_new) + ..., or add to it. Along its way it meets
  at most c steps (c = the chain: ``cols`` for one thread per row; ceil(cols / W) + 3 + log2 W
  for a warp of W lanes, a lane's own values, wide loads, then the merges), each with one
  multiply, one add and one exponential, plus its own exponential. The arguments of its
  exponentials are x_k − m_e and then the increments m_old − m_new: they add up to t_k. So the
  relative perturbations of term k add up to at most a_k = (2c + 2·E·(c + 1) + t_k)·u (E = 2
  ulp), and its computed contribution is e_k(1 + θ_k), |θ_k| ≤ g(a_k) = a_k / (1 − a_k) (Higham's
  γ for a sum of perturbations that need not be whole roundings). The computed d is off by at
  most D = Σ e_k g(a_k), relatively r = D / d.
* An output: y_j = fl(exp(fl(x_j − m)) / d): its own exponential (2E·u), the subtraction (t_j·u)
  and the division, or a reciprocal and a multiply (2u): g_j = g((2E + 2 + t_j)·u). Then
  |ŷ_j − y_j| ≤ y_j · ((1 + g_j) / (1 − r) − 1) = y_j · (g_j + r) / (1 − r).

Added: 16 float64 roundings of y (the reference's own error) and the smallest normal float32
(results that underflow: every e_k has an absolute error below 2^-147 and d ≥ 1). A masked entry
and a fully masked row must be exactly 0. Three passes (maximum, sum, normalise) meet the same
bound with no rescaling. ``tests/test_ch24.py`` computes the worst orders a correct kernel may use
in float32 and stays within it, and shows a wrong rescaling factor, a missed column or a missing
merge level far outside.

24.4 in Triton: its float32 exp is ex2.approx.f32 of the argument times a rounded log2 e, and its
`/` is div.full.f32 (2 ulp): the same bound with the spread counted 2.25 times (the subtraction,
the multiply, and fl32(log2 e)'s 0.224u) and 5u for the division (a reciprocal within 2 ulp and a
multiply at worst), and the chain of Triton's reduction tree: a thread's own values, at most
ceil(cols / 32) + 3, then 5 levels of shuffles and up to 5 across warps (``specs.triton_chain``).

CPU mode runs 24.2's hidden cases at warp sizes 64 and 32 (``autograder.cpu_mode.warp_size_as``),
as chapter 10 does; on a GPU the judge runs the other warp size in a CPU-mode process.

Files: ``specs.py`` the graded exercises, ``references.py`` the course's kernels (and the
three-pass kernel), ``triton_reference.py`` the course's Triton kernel (imports Triton),
``notebook.py`` what the notebook's other cells call.
"""

from autograder.problems.ch10 import at_warp_size
from autograder.problems.ch24.notebook import (CHART, COPY, LENGTHS, TRITON_CHART, VENDOR, chart,
                                               compare_triton, import_triton, measure, merge,
                                               missing, online_steps, recorded, time_cpu)
from autograder.problems.ch24.references import (reference_softmax_rows, reference_softmax_triton,
                                                 reference_softmax_warp, three_pass_softmax)
from autograder.problems.ch24.specs import (BASELINES, EXP_ULPS, SPEED_SHAPE, TRITON_DIVIDE,
                                            TRITON_MAX_COLS, TRITON_SPREAD, WARP_BLOCKS, WORKED,
                                            make_rows, make_rows_fast, rows_bytes, rows_chain,
                                            softmax_error_bound, softmax_host, softmax_rows,
                                            softmax_tolerance, softmax_triton, softmax_warp,
                                            triton_chain, warp_blocks, warp_chain)

__all__ = ["BASELINES", "CHART", "COPY", "EXP_ULPS", "LENGTHS", "PROBLEMS", "SPEED_SHAPE",
           "TRITON_CHART", "TRITON_DIVIDE", "TRITON_MAX_COLS", "TRITON_SPREAD", "VENDOR", "WARP_BLOCKS", "WORKED",
           "at_warp_size", "chart", "compare_triton", "import_triton", "make_rows",
           "make_rows_fast", "measure",
           "merge", "missing", "online_steps", "recorded", "reference_softmax_rows",
           "reference_softmax_triton", "reference_softmax_warp", "rows_bytes", "rows_chain",
           "softmax_error_bound", "softmax_host", "softmax_rows", "softmax_tolerance",
           "softmax_triton", "softmax_warp", "three_pass_softmax", "time_cpu", "triton_chain",
           "warp_blocks", "warp_chain"]

PROBLEMS = (softmax_rows, softmax_warp, softmax_error_bound, softmax_triton)

# `aag bench`: the three-pass kernel beside 24.2's reference, same launch and inputs.
BENCH_VARIANTS = {"softmax_warp": {"one warp per row, three passes (max, sum, normalise)":
                                   three_pass_softmax}}
