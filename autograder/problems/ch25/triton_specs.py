"""Exercise 25.4: LayerNorm forward in Triton, graded like 25.1.

The learner writes a ``@triton.jit`` kernel and a launcher ``layernorm_triton(x, gamma, beta, eps,
y)`` over the course's device arrays (handed to the kernel through
:func:`autograder.machine.triton_bridge.view`); ``eps`` arrives as a Python float, the form Triton
takes a scalar in. Same spec and inputs as 25.1 (:mod:`.specs`): every case has rows with an offset
of up to 10^4 σ, so E[x²] − E[x]² fails here as it does there.

Tolerance: 25.1's bound with Triton's chain of roundings
--------------------------------------------------------
25.1's bound (:func:`.specs.layernorm_bound`) depends on the evaluation order only through c, the
longest chain of float32 roundings that a row's sum (of x, then of (x − μ̂)²) builds, the division
by n included. A Triton program sums a row in one of the orders the exercise asks for: a block of
B ≥ n lanes loaded once (k = 1), or a loop over k = ceil(n / B) column blocks of B ≥ 32 lanes
accumulated lane by lane; then ``tl.sum`` over the B lanes. Lanes past the row's end hold exact
zeros (loaded with ``other=0.0``, deviations zeroed by ``tl.where``), and adding 0 rounds nothing.

* **Compiled (GPU).** ``tl.sum`` adds the e elements a thread holds one after another, then 5
  shuffle steps across its warp and log2(w) ≤ 5 across the program's w ≤ 32 warps. A thread holds
  runs of s ≤ 8 consecutive elements (4 for float32 with 128-bit loads), so with one block
  e ≤ n/(32w) + s and k + e ≤ n/32 + 9; with a loop, e ≤ B/32 + s and k + e ≤ n/B + B/32 + 9 ≤
  n/32 + 10 for 32 ≤ B ≤ n. The division by n: one rounding (``/`` may compile to the
  approximate division, 2 ulp: one more). So c ≤ ceil(n/32) + 10 + 10 + 2.
* **Interpreted (CPU mode).** ``tl.sum`` is NumPy's pairwise sum in float32 (8 running sums over
  blocks of up to 128 values, combined by a tree of 3, the rest added one by one, longer arrays
  split in halves), whose longest chain :func:`numpy_sum_depth` counts: 18 at 128 lanes, one more
  per doubling. k + depth(B) + 1 stays below ceil(n/32) + 22 for every n
  (``tests/test_ch25.py`` checks it up to 2^15 columns).

So c_T(n) = ceil(n/32) + 22 (:func:`triton_chain`), 10 more than 25.1's one warp per row.
``tl.rsqrt`` on a GPU is the approximate reciprocal square root (relative error below 2^-22.9,
2.2u), inside the 4u the bound gives sqrt and the division. The inputs keep the bound meaningful:
their offsets are capped for 25.1's c (κ ≤ 10^6 / c), and c_T ≤ 2c, so the variance's relative
bound stays below 1/2.

Sizes: 25.1's (rows, n), no row length a power of two above 1, so a block covering a row always
has padded lanes (the random hidden sizes are odd: no block size divides them); at most 33
programs a case in CPU mode, where Triton's interpreter runs a program in about a millisecond. The
speed test is 25.1's, 16384 rows of 4096, against the course's Triton kernel
(:mod:`.triton_reference`, imported on first use) and NumPy on the host.
"""

from __future__ import annotations

import functools

import numpy as np

from autograder.core.spec import Case
from autograder.grading.problem import SpeedBar
from autograder.problems.ch25.references import reference_layernorm_triton
from autograder.problems.ch25.specs import (BASELINES, LAYERNORM_CPU, LAYERNORM_GPU, RowsProblem,
                                            diagnose_layernorm, layernorm_bound, layernorm_bytes,
                                            layernorm_flops, layernorm_inputs, layernorm_sample,
                                            layernorm_spec, layernorm_speed_inputs, rows_label)
from autograder.problems.kit.triton import TritonExercise

MIN_LOOP_BLOCK = 32     # the smallest column block of a looped kernel the bound allows for


def triton_chain(n: int) -> int:
    """c_T: the longest chain of float32 roundings in a row's sum in Triton (see above)."""
    return -(-int(n) // 32) + 22


@functools.lru_cache(maxsize=None)
def numpy_sum_depth(m: int) -> int:
    """The longest chain of additions in NumPy's pairwise float32 sum of m contiguous values (what
    ``tl.sum`` is in Triton's interpreter)."""
    m = int(m)
    if m < 8:
        return max(m - 1, 0)
    if m <= 128:
        return (m // 8 - 1) + 3 + m % 8
    half = m // 2
    half -= half % 8
    return 1 + max(numpy_sum_depth(half), numpy_sum_depth(m - half))


def _triton_tolerance(inputs, expected):
    n = inputs["x"].shape[1]
    return {"y": layernorm_bound(inputs["x"], inputs["gamma"], inputs["beta"], inputs["eps"],
                                 expected["y"], c=triton_chain(n))}


def _triton_sample(inputs, idx):
    return layernorm_sample(inputs, idx, chain_of=triton_chain)


def _launch(launcher, inputs, outputs, case):
    # ε as a Python float: Triton takes scalars as Python numbers (float32 exactly: it is one).
    launcher(inputs["x"], inputs["gamma"], inputs["beta"], float(inputs["eps"]), outputs["y"])


CANCELLATION_HINT = (
    "only rows whose mean is large against their spread are wrong (|mean| / std above 100 on "
    "every wrong row). Two causes give that: a variance computed as E[x²] − E[x]² (its two terms "
    "cancel in float32), or padded lanes left in the sum of squares: a lane past the row's end "
    "loaded 0.0, so its x − mean is −mean, and mean² is huge on these rows. Compute the mean "
    "first, then d = tl.where(mask, x − mean, 0.0) and the mean of d · d.")

UNWRITTEN_HINT = (
    "every program must cover its whole row: one program per row (grid = (rows,)), offsets "
    "row · n + cols with cols = tl.arange(0, BLOCK), BLOCK = triton.next_power_of_2(n) (or a "
    "loop over column blocks), and the store masked with cols < n, not left out.")


PADDING_HINT = (
    "the wrong rows came out exactly as if every padded lane added mean² to the sum of squares: "
    "past the row's end x was loaded as 0.0, so x − mean is −mean there, and squared it counts. "
    "Zero those lanes before squaring: d = tl.where(mask, x − mean, 0.0).")


def padded_variance_output(inputs) -> np.ndarray:
    """y (float64) as a kernel computes it whose block is the next power of two above n and
    whose sum of squares keeps the padded lanes' (0 − μ)²: σ² + (B − n)·μ² / n."""
    x = np.asarray(inputs["x"], np.float64)
    rows, n = x.shape
    block = 1 << (n - 1).bit_length()
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True) + (block - n) / n * mu ** 2
    return ((x - mu) / np.sqrt(var + float(inputs["eps"])) * np.asarray(inputs["gamma"], np.float64)
            + np.asarray(inputs["beta"], np.float64))


def diagnose_layernorm_triton(case: Case, expected, tolerance, got) -> str | None:
    """Unzeroed padded lanes, recognised by their exact effect; else 25.1's diagnosis (wrong on
    the large-offset rows only), in Triton's terms."""
    bad = ~(np.abs(got - expected) <= tolerance)
    n = case.inputs["x"].shape[1]
    if bad.any() and n & (n - 1):
        padded = padded_variance_output(case.inputs)
        if np.all(np.abs(got[bad] - padded[bad]) <= 1e-3 * (1 + np.abs(padded[bad]))):
            return PADDING_HINT
    return CANCELLATION_HINT if diagnose_layernorm(case, expected, tolerance, got) else None


class TritonRowsProblem(TritonExercise, RowsProblem):
    """A row-wise exercise whose answer is a Triton launcher: cases are 25.1's sizes without launch
    shapes or warp sizes (the learner's launcher picks its grid and blocks); where Triton cannot be
    installed, the notebook's checks say why and skip (a grader must have it)."""

    portable_warp_sizes = ()

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        """The sizes, with the random hidden ones made odd: no power-of-two block divides them."""
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = list(self.sizes.hidden if hidden else self.sizes.visible)
        count, lo, hi = self.sizes.hidden_random
        if hidden and count:
            sizes += [tuple(int(v) | 1 for v in rng.integers(lo, hi, size=2)) for _ in range(count)]
        return [Case(size=size, inputs=self.make_inputs(rng, size), label=rows_label(size))
                for size in sizes]

    def portability_cases(self, warp: int = 64, seed: int | None = None) -> list[Case]:
        return []

    unwritten_hint = UNWRITTEN_HINT

layernorm_triton = TritonRowsProblem(
    "layernorm_triton",
    title="LayerNorm over rows in Triton: one program per row, masked blocks, a stable variance",
    spec=layernorm_spec, make_inputs=layernorm_inputs,
    outputs=lambda size: {"y": ((int(size[0]), int(size[1])), np.float32)},
    tolerance=_triton_tolerance, launch=_launch,
    cpu_sizes=LAYERNORM_CPU, gpu_sizes=LAYERNORM_GPU, size_label=rows_label,
    bytes_moved=layernorm_bytes, flops=layernorm_flops, baselines=BASELINES,
    reference=reference_layernorm_triton, speed_inputs=layernorm_speed_inputs,
    sample_spec=_triton_sample,
    # The course's kernel reads each row once (held in registers); a kernel that reads it three
    # times, as Triton's tutorial does, gets the second and third reads mostly from L2. Half the
    # reference's speed passes, as in 25.1.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=10.0),
    kernel_language="triton",
    value_hint=("y = (x − μ) / sqrt(σ² + ε) · γ + β per row: μ = tl.sum(x) / n over the row's n "
                "values (padded lanes loaded as 0.0 add nothing), σ² = the mean of (x − μ)² with "
                "the padded lanes' x − μ set to 0 by tl.where before squaring, divided by n (not "
                "n − 1), ε inside tl.rsqrt, γ and β loaded at the same columns. Wrong on rows "
                "with a large offset only? E[x²] − E[x]² cancels there, and so do unzeroed "
                "padded lanes."),
)

layernorm_triton.diagnose = diagnose_layernorm_triton
