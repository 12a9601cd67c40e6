"""What the chapters' exercises are made of, written once.

- :mod:`.inputs`: random inputs with real spread (made in parallel at speed sizes), launch
  shapes, CPU counts;
- :mod:`.memo`: what a speed test's sample checks compute once per input array;
- :mod:`.kernels`: :class:`KernelCache`, reference kernels built once under the simulator's
  ``cuda``-global rule;
- :mod:`.baselines`: CPU baselines compiled with ``numba.njit`` on first use;
- :mod:`.formula`: exercises answered by a formula in plain Python;
- :mod:`.matmul`: the matrix product's inputs, spec, tolerance and launch (chapters 3, 5, 6);
- :mod:`.images`: a test image with real structure and its gray version (chapters 3, 7, 9);
- :mod:`.recorded`: a measuring cell's run on the course's GPU, written and read back (25-27);
- :mod:`.triton`: :class:`TritonExercise`, what an exercise answered in Triton adds (chapters 24-27).
"""

from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.images import GRAY_WEIGHTS, test_image, to_gray
from autograder.problems.kit.inputs import (cores, grid_blocks, grid_over, in_parallel,
                                            normal_fast, parallel_fill, piece_edges,
                                            random_floats, random_floats_fast, spread,
                                            uniform_fast, unravel)
from autograder.problems.kit.memo import once_per_array
from autograder.problems.kit.kernels import KernelCache
from autograder.problems.kit.matmul import (MATMUL_BASELINES, SPEED_MATMUL, cupy_matmul,
                                            matmul_blocks, matmul_bytes_moved, matmul_flops,
                                            matmul_inputs, matmul_launch, matmul_outputs,
                                            matmul_sample, matmul_spec, matmul_speed_inputs,
                                            matmul_tolerance)

__all__ = ["GRAY_WEIGHTS", "KernelCache", "MATMUL_BASELINES", "SPEED_MATMUL", "cores",
           "cupy_matmul", "formula_problem", "grid_blocks", "grid_over", "in_parallel",
           "matmul_blocks", "matmul_bytes_moved", "matmul_flops", "matmul_inputs", "matmul_launch",
           "matmul_outputs", "matmul_sample", "matmul_spec", "matmul_speed_inputs",
           "matmul_tolerance", "njit_on_first_call", "normal_fast", "once_per_array",
           "parallel_fill", "piece_edges", "random_floats", "random_floats_fast", "spread",
           "test_image", "to_gray", "uniform_fast", "unravel"]
