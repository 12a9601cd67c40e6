"""Chapter 8 (PMPP ch. 8, Stencil): a 3-D seven-point stencil, first one thread per output point,
then with a shared-memory input tile (halo included), then with thread coarsening along z and
register tiling; and PMPP's arithmetic-intensity count for tiled stencils.

The spec (every exercise): ``inp`` and ``out`` are float32 volumes of shape ``(nz, ny, nx)``,
indexed ``[i, j, k]`` with ``k`` (x) the fastest axis. An interior point (no index 0 or N - 1 on
its axis) gets

    out[i, j, k] = c0 in[i, j, k] + c1 in[i, j, k-1] + c2 in[i, j, k+1]
                 + c3 in[i, j-1, k] + c4 in[i, j+1, k] + c5 in[i-1, j, k] + c6 in[i+1, j, k]

and a boundary point (some index 0 or N - 1) copies the input: ``out[i, j, k] = in[i, j, k]``.
The coefficients are seven float32 scalar arguments. The kernels are launched as
``kernel[blocks, threads](inp, out, c0, c1, c2, c3, c4, c5, c6)`` with 3-D blocks ``(x, y, z)``
(the coarsened kernel: 2-D blocks ``(x, y)`` and the grid's z splitting the volume into slabs).

Tolerance: a seven-term dot product in float32, in any order, fused or not, is within
``gamma_7 * sum_m |c_m x_m|`` of the exact one (Higham, Accuracy and Stability of Numerical
Algorithms, §3.1); boundary points must be exact copies.

Files: ``specs.py`` holds the graded exercises, ``references.py`` the course's reference kernels
and the bench variants, ``notebook.py`` what the notebook's other cells call (``measure``).
"""

from autograder.problems.ch08.notebook import measure
from autograder.problems.ch08.references import (IN_TILE, OUT_TILE, PLANE_OUT, PLANE_TILE,
                                                 reference_basic, reference_coarsened,
                                                 reference_register_tiled, reference_three_planes,
                                                 reference_tiled, variant_column_l1,
                                                 variant_column_l1_deep, variant_cross,
                                                 variant_cross_long, variant_cross_rows2,
                                                 variant_flat_rows2, variant_flat_rows4,
                                                 variant_flat_rows4_host_views,
                                                 variant_flat_rows4_late_x,
                                                 variant_flat_rows4_shfl,
                                                 variant_flat_rows4_shfl_deep, variant_rows4,
                                                 variant_rows8)
from autograder.problems.ch08.specs import (BASELINES, COEFFICIENTS, FLOPS_PER_POINT, SPEED_VOLUME,
                                            basic_blocks, coarsened_blocks, intensity, slab_range,
                                            slabs, stencil7, stencil_basic, stencil_coarsened,
                                            stencil_intensity, stencil_tiled, test_volume,
                                            tiled_blocks)

__all__ = ["BASELINES", "COEFFICIENTS", "FLOPS_PER_POINT", "IN_TILE", "OUT_TILE", "PLANE_OUT",
           "PLANE_TILE", "SPEED_VOLUME", "basic_blocks", "coarsened_blocks", "intensity", "measure",
           "reference_basic", "reference_coarsened", "reference_register_tiled",
           "reference_three_planes", "reference_tiled", "slab_range", "slabs", "stencil7",
           "stencil_basic", "stencil_coarsened", "stencil_intensity", "stencil_tiled",
           "test_volume", "tiled_blocks", "variant_column_l1", "variant_column_l1_deep",
           "variant_cross", "variant_cross_long", "variant_cross_rows2", "variant_flat_rows2",
           "variant_flat_rows4", "variant_flat_rows4_host_views", "variant_flat_rows4_late_x",
           "variant_flat_rows4_shfl", "variant_flat_rows4_shfl_deep", "variant_rows4",
           "variant_rows8"]

PROBLEMS = (stencil_basic, stencil_intensity, stencil_tiled, stencil_coarsened)

# `aag bench` times these beside the coarsened exercise's reference, with the same launch (the
# variant_* kernels have a grid and block of their own: references.variant_launch).
BENCH_VARIANTS = {"stencil_coarsened": {
    "register tiled, one load in flight (the exercise's solution)": reference_register_tiled,
    "three shared planes, no register tiling (PMPP §8.4)": reference_three_planes,
    "z columns, x/y neighbours from L1, no shared memory, 4 planes in flight (32 × 8, z chunks "
    "of 64)": variant_column_l1,
    "z columns, x/y neighbours from L1, no shared memory, 8 planes in flight (32 × 8, z chunks "
    "of 64)": variant_column_l1_deep,
    "warp rows, 4 rows per thread, x by shuffle, 2 planes in flight (32 × 16 tile, z chunks "
    "of 32)": variant_rows4,
    "warp rows, 8 rows per thread, x by shuffle, 2 planes in flight (32 × 32 tile, z chunks "
    "of 32)": variant_rows8,
    "z columns, whole x/y/z cross of each plane loaded 2 planes ahead, no load behind a store "
    "(32 × 8, z chunks of 64)": variant_cross,
    "z columns, 2 rows per thread sharing y neighbours, crosses 2 planes ahead (32 × 4 threads, "
    "32 × 8 tile, z chunks of 64)": variant_cross_rows2,
    "z columns, crosses 2 planes ahead, 64 × 4 blocks, z chunks of 128, at most 64 registers "
    "(50% occupancy)": variant_cross_long,
    "flat int32 offsets, z columns, 2 rows per thread sharing y neighbours, crosses 2 planes "
    "ahead (32 × 4 threads, 32 × 8 tile, z chunks of 64)": variant_flat_rows2,
    "flat int32 offsets, z columns, 4 rows per thread sharing y neighbours, crosses 1 plane "
    "ahead (32 × 4 threads, 32 × 16 tile, z chunks of 64)": variant_flat_rows4,
    "flat int32 offsets made on the host (no reshape in the kernel), z columns, 4 rows per "
    "thread sharing y neighbours, crosses 1 plane ahead (32 × 4 threads, 32 × 16 tile, z chunks "
    "of 64)": variant_flat_rows4_host_views,
    "flat int32 offsets made on the host, x neighbours loaded as each plane is computed (L1 hits), "
    "z columns, 4 rows per thread, crosses 1 plane ahead (32 × 4 threads, 32 × 16 tile, z chunks "
    "of 64)": variant_flat_rows4_late_x,
    "flat int32 offsets, 4 rows per thread, x by shuffle (lanes 0/31 load the halo), crosses "
    "1 plane ahead (32 × 4 threads, 32 × 16 tile, z chunks of 64)": variant_flat_rows4_shfl,
    "flat int32 offsets, 4 rows per thread, x by shuffle (lanes 0/31 load the halo), crosses "
    "2 planes ahead (32 × 4 threads, 32 × 16 tile, z chunks of 64)": variant_flat_rows4_shfl_deep,
}}
