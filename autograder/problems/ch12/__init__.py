"""Chapter 12 (PMPP ch. 12, Merge): the co-rank function, a basic parallel merge in which every
thread finds its own input ranges with co-rank, a tiled merge through shared memory, and a bound
on a merge's time (the memory it moves, and the latency chain of a thread's searches).

Every merge takes two sorted float32 arrays ``A`` (``m`` keys) and ``B`` (``n`` keys) and writes
``C``, the ``m + n`` keys in sorted order, and ``src``, where each key came from: ``src[k] = i``
for ``A[i]`` and ``m + j`` for ``B[j]`` (its index in the concatenation A‖B, int32). The merge
must be **stable**: equal keys keep their order, all of A's before any of B's, as PMPP's co-rank
has it; ``src`` makes that visible (``C`` alone cannot tell two equal keys apart). Both outputs
are exact: there is no tolerance.

A problem's size is the pair ``(m, n)``; which keys a case gets follows from ``m + n``
(``kind_of``): small integers with many ties, one single key repeated everywhere, spread-out
floats with a few ties between the arrays, or two ranges that only partly overlap (long stretches
where one array supplies every output). Sizes are never multiples of anything, one array is empty
or much longer than the other in some cases.

``co_rank(k, A, m, B, n)`` (the learner's device function, PMPP's signature) is graded through a
small kernel of the course that evaluates it at many ``k``; the learner's kernels are launched
``kernel[blocks, threads](A, B, C, src)``. In CPU mode the shared-memory race detector
(:mod:`autograder.races`) watches the tiled kernel's tiles, so a missing barrier fails every time.

Files: ``specs.py`` the graded exercises (keys, spec, launches, baselines, verdicts),
``references.py`` the course's kernels (references, bench variants, the co-rank evaluator, vendor),
``notebook.py`` what the notebook's other cells call (timings, merge-path and tile pictures).
"""

from autograder.problems.ch12.notebook import measure, plot_merge_path, plot_tiles, time_cpu_merges
from autograder.problems.ch12.references import (OwnGrid, course_tile, reference_basic,
                                                 reference_circular, reference_merge_path,
                                                 reference_merge_path_searched,
                                                 reference_merge_path_wide, reference_tiled)
from autograder.problems.ch12.specs import (BANDWIDTH, KINDS, LATENCY, RESIDENT, SPEED_SIZE,
                                            co_rank, co_ranks, evaluate_co_rank, fast_sorted_keys,
                                            kind_of, merge_basic, merge_reference, merge_tiled,
                                            merge_time_bound, merged_at, sorted_keys, speed_shape)

__all__ = ["BANDWIDTH", "BENCH_VARIANTS", "KINDS", "LATENCY", "PROBLEMS", "RESIDENT", "SPEED_SIZE",
           "co_rank", "co_ranks", "course_tile", "evaluate_co_rank", "fast_sorted_keys", "kind_of",
           "measure", "merge_basic", "merge_reference", "merge_tiled", "merge_time_bound",
           "merged_at", "plot_merge_path", "plot_tiles", "reference_basic", "reference_circular",
           "reference_merge_path_wide", "reference_tiled", "sorted_keys", "speed_shape",
           "time_cpu_merges"]

PROBLEMS = (co_rank, merge_basic, merge_tiled, merge_time_bound)

# Other kernels `aag bench` times beside an exercise's reference (merge path: a partition kernel,
# then blocks of 256 threads x 11 outputs), with the same inputs: the chapter's tiled merge and the
# circular-buffer merge at the tiled merge's launch, the basic merge at ~8 outputs per thread, and
# two other merge-path kernels (ModernGPU / CUB style, each with its own grid: one block per tile).
BENCH_VARIANTS = {"merge_tiled": {
    "tiled through shared memory (PMPP §12.6, the chapter's design)": reference_tiled,
    "circular buffer (PMPP §12.7)": reference_circular,
    "basic: co-rank per thread, ~8 outputs per thread": lambda: OwnGrid(reference_basic(), 8),
    "merge path: partition kernel + blocks of 128 threads × 15 outputs (keys read once)":
        reference_merge_path,
    "merge path, one kernel: each block's ends by a 32-way warp search, 128 × 15 outputs":
        reference_merge_path_searched,
}}
