"""Chapter 13 (PMPP ch. 13, Sorting): a radix sort of 32-bit unsigned keys with their values, one
pass at a time (each tile sorted by one digit with its digit counts, the count table scanned, the
keys scattered to their places), and a merge sort built on chapter 12's co-rank.

Keys and values are uint32 (keys stay below 0xFFFFFFFF, the poison value of their outputs); count
tables and offsets int32. A pass sorts by the digit ``(key >> shift) & 15`` (``RADIX_BITS = 4``:
8 passes). Blocks of ``T`` threads, one key per thread, tile ``b`` holding keys ``b·T`` to
``b·T + T − 1`` (the last tile partial when ``n`` is not a multiple of ``T``). The count table is
**digit-major**: ``counts[d · blocks + b]`` is the number of keys of digit ``d`` in tile ``b``, so
that its exclusive scan gives, at the same index, where those keys start in the pass's output.

Every sort must be **stable**; the values the checks pair with the keys are the keys' input
positions (a random permutation of them in hidden cases), distinct, so the values show the order
equal keys came out in. Every output is exact.

Files: ``specs.py`` the graded exercises (keys, spec, launches, baselines, verdicts),
``references.py`` the course's kernels (the pass kernels, the count-table scan, the whole sort,
the merge sort, the vendor), ``notebook.py`` what the notebook's other cells call.
"""

from autograder.problems.ch13.notebook import (chart, measure, merge_sort_check, plot_pass,
                                               time_cpu_sorts)
from autograder.problems.ch13.references import (DIGITS, KEY_BITS, MAX_THREADS, RADIX_BITS,
                                                 exclusive_scan, merge_pass_kernel, merge_sort,
                                                 radix_sort_with, reference_local_sort,
                                                 reference_radix_sort, reference_scatter)
from autograder.problems.ch13.specs import (BANDWIDTH, KINDS, SPEED_SIZE, digits, kind_of,
                                            local_sort_reference, radix_keys, radix_local_sort,
                                            radix_scatter, radix_sort, radix_time_bound,
                                            shift_of, stable_order, exclusive_scan_host)

__all__ = ["BANDWIDTH", "DIGITS", "KEY_BITS", "KINDS", "MAX_THREADS", "PROBLEMS", "RADIX_BITS",
           "SPEED_SIZE", "chart", "digits", "exclusive_scan", "exclusive_scan_host", "kind_of",
           "local_sort_reference", "measure", "merge_pass_kernel", "merge_sort", "merge_sort_check",
           "plot_pass", "radix_keys", "radix_local_sort", "radix_scatter", "radix_sort",
           "radix_sort_with", "radix_time_bound", "reference_local_sort", "reference_radix_sort",
           "reference_scatter", "shift_of", "stable_order", "time_cpu_sorts"]

PROBLEMS = (radix_local_sort, radix_scatter, radix_sort, radix_time_bound)
