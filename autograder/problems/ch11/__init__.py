"""Chapter 11 (PMPP ch. 11, Prefix sum (scan)): an inclusive scan of float32 values, first one
section per block (Kogge-Stone, then Brent-Kung), then for any length (a coarsened three-phase
section scan, a scan of the section sums, and the carries added: three kernels), then in a single
pass with decoupled look-back; and a prediction of the bytes a hierarchical scan moves.

The exercises and how the checks launch them (``T`` is the block size, ``cuda.blockDim.x``):

- 11.1 ``kogge_stone``: ``kernel[ceil(n / T), T](x, y)``. Block ``b`` scans its *section*
  ``x[b·T : (b + 1)·T]`` into ``y``: ``y[i] = x[b·T] + ... + x[i]``. Sections are independent (the
  carry from earlier sections comes later in the chapter).
- 11.2 ``brent_kung``: ``kernel[ceil(n / 2T), T](x, y)``, sections of ``2T`` elements.
- 11.3 ``scan_traffic``: a Python function, the bytes a hierarchical scan moves.
- 11.4 ``scan_hierarchical``: a pair of kernels ``(scan_sections_kernel, add_carries_kernel)``,
  launched by :func:`scan_any_length` (PMPP §11.6): sections of ``S = COARSEN·T`` elements are
  scanned and their totals written to ``sums``; the sums are scanned (recursively, the same way,
  into ``carries``); ``add_carries_kernel`` adds ``carries[b - 1]`` to every element of section
  ``b ≥ 1``.
- 11.5 ``scan_single_pass``:
  ``kernel[ceil(n / S), T](x, y, status, aggregates, prefixes, counter)``, launched by
  :func:`single_pass_scan` (PMPP §11.7, Merrill and Garland's decoupled look-back). ``status``
  (one int32 per tile) arrives as NOT_READY (0); a tile sets it to AGGREGATE (1) once
  ``aggregates[b]`` holds its total and to PREFIX (2) once ``prefixes[b]`` holds the sum of tiles
  0 .. b, each time the value first, ``cuda.threadfence()``, then the status with an atomic (as
  CUB's ``ScanTileState`` does). No value means "not published": ``aggregates`` and ``prefixes``
  arrive filled with NaN only so that a value read too early shows. ``counter`` (one int32)
  arrives as 0: each block takes its tile index from it with ``cuda.atomic.add(counter, 0, 1)``,
  and the check verifies that every block did. The last case's input holds a NaN (the spec is
  NaN from there on): a look-back that takes NaN for "not published" never finishes there. In
  CPU mode every access to ``status`` must be atomic, and every read of another tile's value.

Inputs: ``x = s·(3 + 2·N(0, 1))`` in float32, with a random scale ``s = 10^U(-2, 2)``: a mean
of 3s (partial sums grow with the index), about 7% negative values (sums also cancel a little).
Lengths are not multiples of the block or section, and include 1 and lengths below one section.

**The error bound.** Every correct scan computes ``y_i`` as fp32 additions of ``x_0 .. x_i``,
each used once on the way to ``y_i``: ``y_i`` is the root of a binary tree of additions whose
leaves are ``x_0 .. x_i`` (partial sums that several outputs share, like a Kogge-Stone step's or
a section total, are subtrees of each of those outputs' trees). Each addition rounds, ``fl(a + b)
= (a + b)(1 + δ)`` with ``|δ| ≤ u = 2^-24``, so ``ŷ_i = Σ_j x_j Π(1 + δ)`` over the additions on
the path from ``x_j`` up to ``y_i``, and

    |ŷ_i - y_i| ≤ γ_c · Σ_{j ≤ i} |x_j|,   γ_c = c·u / (1 - c·u),

with ``c`` the largest number of additions on any such path (Higham, *Accuracy and Stability of
Numerical Algorithms*, §4.2). Adding an exact zero (the padding past the end of the array, or a
running sum started at 0) rounds nothing and does not count. Along a path, each addition joins
the partial sum so far with a disjoint, nonempty set of terms, so a sum of ``m`` terms has
``c ≤ m - 1`` **in any order**. The checks use, for output ``i``:

- sections (11.1, 11.2): ``c = p``, ``p`` = the position of ``i`` in its section (``p + 1``
  terms). Kogge-Stone needs ``⌈log2(p + 1)⌉``, Brent-Kung at most ``2·log2 S - 1``, a sequential
  loop ``p``: all pass. The first element of a section is a copy and must be exact.
- whole arrays (11.4, 11.5), sections (tiles) of ``S = COARSEN·T``:
  ``c = 2·COARSEN + 2·⌈log2 T⌉ + 2 + ⌊i / S⌋``:
  ``2·COARSEN`` for a thread's elements added in sequence, possibly twice (once for the thread's
  total, once again starting from the thread's prefix); ``2·⌈log2 T⌉`` for the scan of the ``T``
  thread totals (Brent-Kung's up- and down-sweep are the deepest tree scans; Kogge-Stone and a
  warp-shuffle scan are shallower); ``2`` for adding the thread's prefix and the carry;
  ``⌊i / S⌋`` for the chain of carries: the carry of tile ``k`` adds up the ``k`` earlier tiles'
  totals, at most ``k - 1`` additions in any order: a hierarchical scan's recursive scan of the
  sums, a look-back that adds earlier aggregates one at a time, or a chained scan that waits for
  its predecessor's prefix (one addition per tile).

This is not a blanket relative tolerance: where one term is large against the sum so far (the
first elements), a value off by one element (an exclusive scan, ``y[i] = y[i-1]``) is off by
``|x_i|``, hundreds of times the bound; a missing carry is off by the sum of whole sections,
``1 / (c·u)`` (over 10^4) times the bound. ``tests/test_ch11.py`` measures both.

Files: ``specs.py`` the graded exercises (inputs, spec, bound, launches, baselines, verdicts),
``references.py`` the course's kernels (references, bench variants, vendor), ``notebook.py`` what
the notebook's other cells call (network pictures, timings).
"""

from autograder.problems.ch11.notebook import (hierarchical_runner, measure, plot_measurements,
                                               plot_network, sections_runner, single_pass_runner)
from autograder.problems.ch11.references import (AGGREGATE, COARSEN, MAX_THREADS, NOT_READY,
                                                 PREFIX, TILE_WORDS, packed_at,
                                                 hierarchical_shuffle, reference_brent_kung,
                                                 reference_hierarchical, reference_kogge_stone,
                                                 reference_single_pass, single_pass_chained,
                                                 single_pass_one_thread, single_pass_shuffle,
                                                 window_single_pass)
from autograder.problems.ch11.specs import (BASELINES, SPEED_THREADS, brent_kung,
                                            hierarchical_bytes, inclusive_scan, kogge_stone,
                                            network, sampled_scan, scan_any_length,
                                            scan_hierarchical, scan_inputs, scan_single_pass,
                                            scan_traffic, section_scan, section_tolerance,
                                            single_pass_scan, whole_tolerance)

__all__ = ["AGGREGATE", "BASELINES", "BENCH_VARIANTS", "COARSEN", "MAX_THREADS", "NOT_READY",
           "PREFIX", "PROBLEMS", "SPEED_THREADS", "TILE_WORDS", "brent_kung", "hierarchical_bytes", "hierarchical_runner",
           "hierarchical_shuffle", "inclusive_scan", "kogge_stone", "measure", "network",
           "plot_measurements", "plot_network", "reference_brent_kung", "reference_hierarchical",
           "reference_kogge_stone", "reference_single_pass", "sampled_scan", "scan_any_length",
           "scan_hierarchical", "scan_inputs", "scan_single_pass", "scan_traffic", "section_scan",
           "section_tolerance", "sections_runner", "single_pass_chained", "single_pass_one_thread",
           "single_pass_runner", "single_pass_scan", "single_pass_shuffle", "whole_tolerance",
           "window_single_pass"]

PROBLEMS = (kogge_stone, brent_kung, scan_traffic, scan_hierarchical, scan_single_pass)

# `aag bench` times these beside an exercise's reference, with the same launch and inputs.
BENCH_VARIANTS = {
    "scan_single_pass": {
        "one thread looks back one tile at a time (the notebook's solution)": single_pass_one_thread,
        "chained: each tile waits for the previous tile's prefix (PMPP §11.7)": single_pass_chained,
        "status word and two values, 32 predecessors read at once with atomics": window_single_pass,
        "the status-word scan with a warp-shuffle block scan": single_pass_shuffle,
        "the reference with tiles of 128 threads × 48": packed_at(128, 48),
        "the reference with tiles of 256 threads × 24": packed_at(256, 24),
        "the reference with tiles of 64 threads × 32": packed_at(64, 32),
        # The reference before its indices were made unsigned.
        "the reference with signed indices (wraparound code for negative indices)":
            packed_at(128, 32, unsigned=False),
    },
    "scan_hierarchical": {"the reference with a warp-shuffle block scan": hierarchical_shuffle},
}
