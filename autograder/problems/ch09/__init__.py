"""Chapter 9 (PMPP ch. 9, Parallel histogram): a byte histogram with atomic operations, first on
global memory, then privatized in shared memory with coarsening, then with runs of equal values
aggregated; and a bound on a histogram's time (bandwidth, atomic throughput, the hottest bin).

Every histogram exercise counts the bytes of a ``uint8`` array ``data`` into ``hist``, 256
``uint32`` bins (bin b counts the bytes equal to b). The launch zeroes ``hist`` first (as
``cudaMemset`` would) and then runs the learner's kernel ``kernel[blocks, threads](data, hist)``.
Counts are integers: they must be exact.

The inputs have real structure, and which one a case gets follows from its size (``kind_of``):
uniform random bytes, English-like text (words drawn with Zipf frequencies), a gray photo-like
image (chapter 3's ``test_image``, quantised to bytes) and a scanned page (mostly white paper,
lines of dark glyphs: a heavily skewed histogram, with long runs of equal bytes). In CPU mode the
shared-memory race detector (:mod:`autograder.races`) catches a private histogram updated with a
plain ``+=`` or a missing barrier; ``race_check_outputs`` asks it to watch ``hist`` too, so a
global histogram updated with a plain ``+=`` is caught as well.

``specs.py`` holds the graded exercises (inputs, spec, verdicts, CPU baselines),
``references.py`` the course's kernels (the references, CuPy's bincount, :func:`zero`) and
``notebook.py`` what the "measure it" cells call.
"""

from autograder.problems.ch09.notebook import measure, plot_measurements
from autograder.problems.ch09.references import (NUM_BINS, reference_aggregate, reference_private,
                                                 zero)
from autograder.problems.ch09.specs import (BASELINES, KIND_LABELS, KINDS, NotPrivatized,
                                            byte_counts, check_privatized, diagnose,
                                            histogram_aggregate, histogram_global,
                                            histogram_private, histogram_time_bound, hot_fraction,
                                            kind_of, make_bytes, run_histogram, speed_shape)

__all__ = ["BASELINES", "BENCH_VARIANTS", "KINDS", "KIND_LABELS", "NUM_BINS", "NotPrivatized",
           "PROBLEMS", "byte_counts", "check_privatized", "diagnose", "histogram_aggregate",
           "histogram_global", "histogram_private", "histogram_time_bound", "hot_fraction",
           "kind_of", "make_bytes", "measure", "plot_measurements", "reference_aggregate",
           "reference_private", "run_histogram", "speed_shape", "zero"]

PROBLEMS = (histogram_global, histogram_private, histogram_aggregate, histogram_time_bound)

# Other kernels `aag bench` times beside an exercise's reference, with the same launch and inputs:
# on the scanned page (9.3's speed input), the privatized kernel without aggregation.
BENCH_VARIANTS = {"histogram_aggregate": {"9.2's reference, no aggregation": reference_private}}
