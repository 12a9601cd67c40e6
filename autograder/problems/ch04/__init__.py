"""Chapter 4 (PMPP ch. 4, Compute architecture and scheduling): a device's peak figures from its
properties, control divergence measured with one computation written two ways, and the occupancy
calculation.

**The two-kinds work** (exercises 4.2 and 4.3). Element ``i`` has a value ``x[i]`` and a kind,
``kind[i]``, 0 or 1. An element of kind 0 gets the *power form* of a polynomial, with the
coefficients ``a`` (``D = a.size`` of them, highest power first, as ``np.polyval``)::

    p(x) = a[0]·x^(D−1) + a[1]·x^(D−2) + … + a[D−1]      (Horner: acc = acc·x + a[k], k = 0 … D−1)

and an element of kind 1 the *product form*, with the factors ``b`` (``E = b.size``)::

    q(x) = (1 + b[0]·x)(1 + b[1]·x) … (1 + b[E−1]·x)

``divergent`` runs one thread per element in the original order: the kinds are mixed, so nearly
every warp takes both branches. ``uniform`` gets the elements grouped by kind (``order`` lists the
indices of the elements of kind 0, then those of kind 1, each group in increasing order;
``x_sorted = x[order]``, ``kind_sorted = kind[order]``); thread ``t`` works on sorted element
``t`` and stores its result at ``out[order[t]]``, so every warp but the one at the boundary takes
a single branch, and the output is the same as ``divergent``'s.

**Occupancy** (4.4) follows the rules of CUDA's occupancy calculator (``cuda_occupancy.h``, the
same rules as ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``) for the default shared-memory
carveout: see :func:`resident_blocks`.

``specs.py`` holds the graded exercises (their inputs, specs, tolerances and CPU baselines),
``references.py`` the course's reference kernels and the bench variant (this chapter has no
notebook helpers).
"""

from autograder.problems.ch04.references import (reference_divergent, reference_interleaved,
                                                 reference_uniform)
from autograder.problems.ch04.specs import (DEVICES, H200, LIMIT_KEYS, PEAK_EXAMPLES, SPEED_DEGREE,
                                            divergent, group_by_kind, occupancy, peak_figures,
                                            peak_spec, resident_blocks, two_kinds,
                                            two_kinds_tolerance, uniform)

__all__ = ["BENCH_VARIANTS", "DEVICES", "H200", "LIMIT_KEYS", "PEAK_EXAMPLES", "PROBLEMS",
           "SPEED_DEGREE", "divergent", "group_by_kind", "occupancy", "peak_figures", "peak_spec",
           "reference_divergent", "reference_interleaved", "reference_uniform", "resident_blocks",
           "two_kinds", "two_kinds_tolerance", "uniform"]

PROBLEMS = (peak_figures, divergent, uniform, occupancy)

# `aag bench`: the same inputs and launch as the speed test, with every warp diverging.
BENCH_VARIANTS = {"uniform": {"lanes interleaved across the two kinds (every warp diverges)":
                              reference_interleaved}}
