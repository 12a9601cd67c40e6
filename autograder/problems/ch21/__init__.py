"""Chapter 21 (PMPP ch. 21, CUDA dynamic parallelism): a kernel that launches kernels, in CUDA
C++, for work whose size is found on the GPU (adaptive Bezier tessellation, a quadtree). Numba
CUDA has no launch from a kernel, so the chapter shows the book's CUDA C++ as text and has the
learner build what Python can: each curve's count of points (21.1), a scan of the counts and one
kernel with a block per curve in place of a child grid per curve (21.2, timed against the flat
version that draws every curve with the most points), and a quadtree built by waves the host
launches in place of a block launching its four children (21.3).

Files: ``specs.py`` the graded exercises (inputs, float64 spec, tolerance, launches, baselines,
speed bar), ``references.py`` the course's kernels, ``notebook.py`` what the notebook's other
cells call.
"""

from autograder.problems.ch21.notebook import (BEZIER_CUDA, LIMITS_TEXT, QUADTREE_CUDA, chart,
                                               course_quadtree_of, measure, sample_curves,
                                               show_cuda, show_quadtree, show_tessellation, time_cpu, try_counts,
                                               try_quadtree, try_tessellate, work_saved)
from autograder.problems.ch21.references import (MAX_POINTS, MIN_POINTS, course_quadtree,
                                                 course_tessellate, exclusive_scan, flat_kernel,
                                                 reference_counts, tessellate_flat,
                                                 tessellate_kernel)
from autograder.problems.ch21.specs import (BASELINES, SPEED_N, SPEED_POINTS, SPEED_THREADS,
                                            bezier_host, bezier_sample, bezier_tolerance,
                                            cell_of, counts_of, curvature, depth_for,
                                            last_wave_counts, make_curves,
                                            quadtree, quadtree_host, quadtree_inputs,
                                            random_counts, tess_counts, tessellate, total_of)

__all__ = ["BASELINES", "BEZIER_CUDA", "LIMITS_TEXT", "MAX_POINTS", "MIN_POINTS", "PROBLEMS",
           "QUADTREE_CUDA", "SPEED_N", "SPEED_POINTS", "SPEED_THREADS", "bezier_host",
           "bezier_sample", "bezier_tolerance", "cell_of", "chart", "counts_of",
           "course_quadtree", "course_quadtree_of", "course_tessellate", "curvature", "depth_for",
           "last_wave_counts",
           "exclusive_scan", "flat_kernel", "make_curves", "measure", "quadtree",
           "quadtree_host", "quadtree_inputs", "random_counts",
           "reference_counts", "sample_curves", "show_cuda", "show_quadtree",
           "show_tessellation", "tess_counts", "tessellate", "tessellate_flat",
           "tessellate_kernel", "time_cpu", "total_of", "try_counts", "try_quadtree",
           "try_tessellate", "work_saved"]

PROBLEMS = (tess_counts, tessellate, quadtree)

# Other kernels `aag bench` times beside an exercise's reference, with the same launch and inputs.
BENCH_VARIANTS: dict = {}
