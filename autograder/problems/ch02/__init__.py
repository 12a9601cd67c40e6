"""Chapter 2 (PMPP ch. 2, Heterogeneous data parallel computing): vector addition, first one
thread per element with a launcher the learner writes, then a GPU timer made of CUDA events, then
a grid-stride loop timed on a GPU.

``specs.py`` holds the vector additions and their CPU baselines, ``timer.py`` the timer exercise
and the busy kernel the notebook times (``busy_kernel``), ``references.py`` the course's
reference kernel.
"""

from autograder.problems.ch02.references import (grid_stride_unrolled8, grid_stride_unsigned,
                                                 plain_grid_stride, reference_grid_stride)
from autograder.problems.ch02.specs import vector_add, vector_add_grid_stride
from autograder.problems.ch02.timer import busy_kernel, gpu_timer

__all__ = ["BENCH_VARIANTS", "PROBLEMS", "busy_kernel", "gpu_timer", "plain_grid_stride",
           "reference_grid_stride", "vector_add", "vector_add_grid_stride"]

PROBLEMS = (vector_add, gpu_timer, vector_add_grid_stride)

# `aag bench` times these beside the reference, with the same launch and inputs.
BENCH_VARIANTS = {"vector_add_grid_stride": {
    "one element per thread per step (the chapter's loop)": plain_grid_stride,
    "one element per step, unsigned indices": grid_stride_unsigned,
    "8 elements per thread per step, loads before stores, unsigned indices": grid_stride_unrolled8,
}}
