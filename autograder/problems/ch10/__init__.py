"""Chapter 10 (PMPP ch. 10, Reduction): the sum of a float32 array, first as a tree in shared
memory (one segment per block, one atomic per block), then with warp shuffles written for any warp
size, then grid-stride accumulation with shuffles and one atomic per block, timed on a GPU; and a
bound on a reduction's time (reading, the tree's steps, the atomics).

The sums (10.1 ``reduce_tree`` and 10.3 ``reduce_sum``): ``x`` is a float32 array of ``n``
elements and ``out`` a float32 array of one element that the launch sets to 0 (as ``cudaMemset``
would) before ``kernel[blocks, threads](x, out)``; the kernel must leave ``out[0] = sum(x)``.
10.2 ``warp_sums``: ``sums[w]`` is the sum of the elements of warp ``w``, ``x[w·W : (w + 1)·W]``
for a warp size ``W`` (the last warp is partial when ``W`` does not divide ``n``).

The inputs are seeded random floats with an **offset**: ``scale · (5 + u)``, ``u`` uniform in
[-1, 1), ``scale`` random in 10^-3 .. 10^3. Every element is at least 4·scale, so dropping any
one of them (an off-by-one bound, a partial warp or block skipped) moves the sum by far more than
rounding can.

Tolerance: an error bound that holds for correct fp32 code, against the float64 sum
------------------------------------------------------------------------------------
Every way of summing n numbers with fp32 additions is a binary tree whose leaves are the x_i. Each
addition rounds its exact result r to fl(r) = r(1 + δ), |δ| ≤ u = 2^-24 (adding 0 is exact). So
the computed sum is Σ x_i Π_{additions on x_i's path to the root} (1 + δ), and (Higham, *Accuracy
and Stability of Numerical Algorithms*, §4.2)

    |computed − exact| ≤ Σ_i |x_i| γ_{d_i} ≤ γ_c Σ_i |x_i|,     γ_c = c u / (1 − c u) ≈ c u,

where d_i is the number of additions on x_i's path and c the longest such chain the algorithm can
build. The bound holds for *any* order of the additions, so it does not matter which block's
atomic lands first. What c is for each exercise (B blocks of T threads, warp size W; T and W are
powers of two):

* 10.1 (a block sums a segment of 2T elements: one addition while loading, x[i] + x[i + T], then
  a tree of log2 T steps; then one ``atomic.add`` per block into ``out[0]``). The atomics form a
  chain: ``out`` starts at 0, so the first block's sum enters exactly and then passes through at
  most B − 1 more roundings, in whatever order the blocks arrive. Loading 2T values into shared
  memory and running a tree of log2(2T) steps (PMPP's first kernels) gives the same depth.
  **c = 1 + log2 T + B.**
* 10.3 (grid-stride: each thread first adds up its elements, at most k = ceil(n / (B·T)) of them,
  in any order, with any number of accumulators; loads of up to four elements at a time can give
  a thread up to three more elements, so its chain is at most k + 3; then the block combines its T
  values: shuffles within each warp (log2 W steps), then the W-th part of them, one per warp,
  by a tree or by a plain loop (at most T / W additions, which is never less than a tree's
  log2(T / W)); then one atomic per block, at most B in a chain).
  **c = k + 3 + log2 W + T / W + B.**
* 10.2 (each warp's W values combined by a tree of shuffles, down or xor): **c = log2 W** per
  output, with Σ|x| taken over that warp's elements.

The reference is np.sum in float64 (pairwise), off by at most γ_{⌈log2 n⌉ + 1}(2^-53) Σ|x|, which
is added; so is the smallest normal float32 (sums near 0 would be measured in absolute terms). The
tests (``tests/test_ch10.py``) sum in fp32 the ways a correct kernel may and stay within the bound,
and show that the smallest classic bug (one element dropped or doubled) misses it by more than 50
times on every case the checks use.

In CPU mode the shared-memory race detector (:mod:`autograder.races`) catches a missing barrier in
the tree, and ``race_check_outputs`` catches a plain ``out[0] += ...`` by several blocks (a
read-modify-write race: on a GPU blocks would lose each other's sums). The warp exercises need the
simulator's warp intrinsics (``shfl_down_sync``, ``ballot_sync``, ...) from :mod:`autograder.warp`,
whose ``activemask()`` gives only part of the lanes that reach it (CUDA allows that), so a
shuffle whose mask came from it stops with a message that says why. 10.2's hidden cases in CPU
mode run the kernel at warp sizes 32 and 64 with ``autograder.cpu_mode.warp_size_as``; on a GPU
only the device's warp size can run, and the hidden check says so.

Files: ``specs.py`` holds the graded exercises, ``references.py`` the course's reference kernels
and the book's kernels ``aag bench`` times, ``notebook.py`` what the notebook's other cells call
(``tree_profile``, ``measure``, ``plot_measurements``).
"""

from autograder.problems.ch10.notebook import (measure, plot_measurements, profile_table,
                                               tree_profile)
from autograder.problems.ch10.references import (COARSE, book_kernel, four_in_flight, in_flight,
                                                 plain_grid_stride, reference_sum, segment_kernel)
from autograder.problems.ch10.specs import (BASELINES, PORTABILITY_NOTE, WARP_BLOCKS, SumProblem,
                                            at_warp_size, device_warp_size, diagnose_sum,
                                            diagnose_warp_sums, exact_sum, grid_stride_chain,
                                            magnitude, make_values, make_values_fast, reduce_sum,
                                            reduce_time_bound, reduce_tree, speed_shape,
                                            sum_tolerance, tree_chain, warp_chain, warp_sums)

__all__ = ["BASELINES", "PORTABILITY_NOTE", "WARP_BLOCKS", "SumProblem", "at_warp_size",
           "book_kernel", "device_warp_size", "diagnose_sum", "diagnose_warp_sums", "exact_sum",
           "grid_stride_chain", "in_flight", "magnitude", "make_values", "make_values_fast",
           "measure", "plot_measurements", "profile_table", "reduce_sum", "reduce_time_bound",
           "reduce_tree", "reference_sum", "segment_kernel", "speed_shape", "sum_tolerance",
           "tree_chain", "tree_profile", "warp_chain", "warp_sums"]

PROBLEMS = (reduce_tree, warp_sums, reduce_sum, reduce_time_bound)

# `aag bench`: the book's steps, timed beside 10.3's reference with the same inputs (the
# segment-per-block kernels choose their own grid).
BENCH_VARIANTS = {"reduce_sum": {
    "interleaved tree, divergent (segment of 512 per block)": lambda: book_kernel("divergent"),
    "interleaved tree, packed threads: bank conflicts": lambda: book_kernel("strided"),
    "convergent tree (PMPP 10.4-10.7)": lambda: book_kernel("convergent"),
    f"convergent, coarsened x{COARSE} (PMPP 10.8)": lambda: book_kernel("coarsened"),
    "grid-stride, one float per load, shuffles": plain_grid_stride,
    "grid-stride, four floats in flight, shuffles": four_in_flight,
    # What the next rows test is in in_flight's docstring (references.py).
    "the reference's loop pipelined: 4 pairs per pass, loaded a pass before they are added":
        lambda: in_flight(4, pipelined=True),
    "pipelined, 8 pairs per pass": lambda: in_flight(8, pipelined=True),
    "the reference's loop with 8 pairs per pass, not pipelined": lambda: in_flight(8),
    "the reference on 6 blocks of 256 per SM": lambda: in_flight(4, per_sm=6),
    "pipelined, 4 pairs per pass, on 6 blocks of 256 per SM":
        lambda: in_flight(4, per_sm=6, pipelined=True),
}}
