"""Chapter 7 (PMPP ch. 7, Convolution: an introduction to constant memory and caching): a 2-D
convolution three ways (the filter as an argument, the filter in constant memory, and tiled with
halo cells in shared memory), and a prediction of what each one must move.

The convolution (PMPP's form, a correlation: the filter is not flipped), for an ``H × W`` float32
image and a ``(2r + 1) × (2r + 1)`` float32 filter ``F``, with zero "ghost" cells outside the
image::

    out[i, j] = sum over a, b in [0, 2r] of F[a, b] * image[i + a - r, j + b - r]

Constant memory in Numba holds values frozen into a kernel when it is compiled, so the constant
and tiled exercises are kernel *factories*: ``make_conv2d_constant(F)`` and
``make_conv2d_tiled(F, in_tile)`` return a kernel ``kernel(image, out)`` that closes over ``F``.
The problems' launches call the factory once per filter (remembering what it returned) and launch
the kernel it made. Each case's filter is made from a seed (:func:`conv_filter`), so the launch
needs no copy of it back from the GPU, and a speed test's timed calls compile nothing.

Sizes are an image's ``(height, width)``; the radius is a function of the size
(:func:`conv_radius`) so that a verdict can name it and a grid can be planned from the size alone.

Files: ``specs.py`` the graded exercises (spec, inputs, launches, baselines), ``references.py``
the course's reference kernel and the kernels `aag bench` times beside it; the test image is
chapter 3's (:mod:`autograder.problems.kit.images`).
"""

from autograder.problems.ch07.references import (REF_COLS, REF_ROWS, conv_pairs_8x2,
                                                 conv_rows_loop, conv_unrolled_16,
                                                 conv_unrolled_16x2,
                                                 reference_conv2d_tiled, reference_shape)
from autograder.problems.ch07.specs import (SPEED_TILE, conv2d_basic, conv2d_constant, conv2d_tiled,
                                            conv_bytes, conv_filter, conv_radius, conv_time_bounds,
                                            convolve2d, fast_image)

__all__ = ["PROBLEMS", "REF_COLS", "REF_ROWS", "SPEED_TILE", "conv2d_basic", "conv2d_constant",
           "conv2d_tiled", "conv_bytes", "conv_filter", "conv_radius", "conv_time_bounds",
           "convolve2d", "fast_image", "reference_conv2d_tiled", "reference_shape"]

PROBLEMS = (conv2d_basic, conv2d_constant, conv2d_tiled, conv_time_bounds)

# Other kernels `aag bench` times beside the exercise's reference, with the same inputs (each has
# a launch of its own, from references.own_launch_shape, as the reference has).
BENCH_VARIANTS = {"conv2d_tiled": {
    "8 rows per thread as loops, one column, 32 x 8 blocks": conv_rows_loop,
    "fully unrolled, 16 rows per thread, one column, 32 x 8 blocks": conv_unrolled_16,
    "fully unrolled, 16 rows x 2 columns per thread, 64 x 4 blocks": conv_unrolled_16x2,
    "the reference's design with 8-byte loads (each row's window as pairs of floats)":
        conv_pairs_8x2}}
