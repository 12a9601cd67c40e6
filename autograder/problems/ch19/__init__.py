"""Chapter 19 (PMPP ch. 19, Parallel programming and computational thinking): choosing a
decomposition for a problem the course has not shown, one step of a direct all-pairs N-body
computation (the softened gravitational acceleration of every body). The roofline bound of
each decomposition is predicted first; then the output-centric gather (one thread per body),
the gather tiled through shared memory, and (measured, not graded) the input-centric scatter
that halves the arithmetic with Newton's third law at the price of atomics.

Files: ``specs.py`` the graded exercises (inputs, float64 spec, tolerance, launches, baselines,
speed bar), ``references.py`` the course's kernels, ``notebook.py`` what the notebook's other
cells call.
"""

from autograder.problems.ch19.notebook import (bounds, chart, measure, show_decompositions,
                                               three_bodies, time_cpu, try_kernel)
from autograder.problems.ch19.references import (BLOCK_MAX, reference_gather, reference_scatter,
                                                 reference_tiled, scatter_step)
from autograder.problems.ch19.specs import (BASELINES, BLOCK_SIZES, FLOPS_PER_PAIR, PER_TERM,
                                            SPEED_BLOCK, SPEED_N, nbody_bound, nbody_bytes,
                                            nbody_flops, nbody_gather, nbody_host, nbody_inputs,
                                            nbody_sample, nbody_tiled, nbody_tolerance)

__all__ = ["BASELINES", "BENCH_VARIANTS", "BLOCK_MAX", "BLOCK_SIZES", "FLOPS_PER_PAIR", "PER_TERM",
           "PROBLEMS", "SPEED_BLOCK", "SPEED_N", "bounds", "chart", "measure", "nbody_bound",
           "nbody_bytes", "nbody_flops", "nbody_gather", "nbody_host", "nbody_inputs",
           "nbody_sample", "nbody_tiled", "nbody_tolerance", "reference_gather",
           "reference_scatter", "reference_tiled", "scatter_step", "show_decompositions",
           "three_bodies", "time_cpu", "try_kernel"]

PROBLEMS = (nbody_bound, nbody_gather, nbody_tiled)

# Other kernels `aag bench` times beside an exercise's reference, with the same launch and inputs.
BENCH_VARIANTS = {"nbody_tiled": {"untiled gather, every body from global memory":
                                  reference_gather}}
