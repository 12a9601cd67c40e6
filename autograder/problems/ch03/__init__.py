"""Chapter 3 (PMPP ch. 3, Multidimensional grids and data): kernels on 2-D grids over row-major
arrays: an RGB image to gray, a box blur, and a naive matrix multiplication.

Sizes are shapes (see :class:`autograder.problem.Case`): an image's ``(height, width)`` or a
matmul's ``(M, K, N)``. The learner writes only the kernel; the problem launches it with 2-D blocks
of ``case.threads = (x, y)`` threads and a grid of ``case.blocks = (ceil(cols / x), ceil(rows / y))``
blocks, so x runs along a row (columns) and y down the image (rows).

Files: ``specs.py`` the graded exercises, ``references.py`` the reference kernels and the blur's
bench variants; the test image and the matmul pieces chapters share are in :mod:`autograder.problems.kit`.
"""

from functools import partial

from autograder.problems.ch03.references import (blur_fixed_radius, blur_shared_tile,
                                                 blur_sliding_rows, blur_unrolled_rows)
from autograder.problems.ch03.specs import (BLOCK_SHAPES, VISIBLE_BLOCK, blur, box_blur,
                                            image_time_bound, matmul_naive, rgb_to_gray)
from autograder.problems.kit.images import test_image, to_gray

__all__ = ["BLOCK_SHAPES", "PROBLEMS", "VISIBLE_BLOCK", "blur", "box_blur", "image_time_bound",
           "matmul_naive", "rgb_to_gray", "test_image", "to_gray"]

PROBLEMS = (rgb_to_gray, blur, matmul_naive, image_time_bound)

# Other kernels `aag bench` times beside an exercise's reference, with the same launch and inputs.
BENCH_VARIANTS = {"blur": {"radius fixed at compile time (unrolled)": blur_fixed_radius,
                            "radius fixed, 8 rows per thread with row sums": blur_sliding_rows,
                            "row sums unrolled, 16 rows per thread, 32 x 8 blocks":
                                partial(blur_unrolled_rows, 16, 1, (32, 8)),
                            "row sums unrolled, 8 rows x 2 columns per thread, 64 x 4 blocks":
                                partial(blur_unrolled_rows, 8, 2, (64, 4)),
                            "row sums unrolled, 16 rows x 2 columns per thread, 64 x 4 blocks":
                                partial(blur_unrolled_rows, 16, 2, (64, 4)),
                            "shared-memory tile 128 x 16 (+ halo), 256 threads, 8 rows per thread":
                                partial(blur_shared_tile, 128, 16, 256),
                            "shared-memory tile 128 x 32 (+ halo), 256 threads, 16 rows per thread":
                                partial(blur_shared_tile, 128, 32, 256),
                            "shared-memory tile 64 x 16 (+ halo), 128 threads, 8 rows per thread":
                                partial(blur_shared_tile, 64, 16, 128)}}
