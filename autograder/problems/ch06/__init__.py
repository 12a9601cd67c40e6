"""Chapter 6 (PMPP ch. 6, Performance considerations): memory coalescing through a matrix
transpose (naive, then tiled in shared memory with a padded tile and thread coarsening), the
sectors a warp's access moves (predict, then measure), and register tiling for a matmul.

Launch conventions (the learner writes only the kernel):

- ``transpose_naive``: 2-D blocks of ``case.threads = (x, y)`` threads over the INPUT, x along
  its columns: a grid of ``(ceil(N / x), ceil(M / y))`` blocks for an M × N input.
- ``transpose_tiled``: blocks of ``(TILE, BLOCK_ROWS) = (32, 8)`` threads, one block per
  ``TILE × TILE`` tile of the input: a grid of ``(ceil(N / 32), ceil(M / 32))``; each thread moves
  ``TILE / BLOCK_ROWS = 4`` elements.
- ``matmul_register_tiled``: blocks of ``(BN // TN, BM // TM) = (8, 8)`` threads, one block per
  ``BM × BN = 64 × 64`` tile of C: a grid of ``(ceil(N / 64), ceil(M / 64))``; each thread
  computes ``TM × TN = 8 × 8`` elements of C.

The course's reference kernels (timed beside the learner's in the speed tests, same launch) are
written for speed: unsigned indices (Numba then skips the negative-index wrap-around code on every
access), the matmul's A tile stored transposed and padded, 16-byte aligned shared arrays read as
128-bit words (``LDS.128``). Their shapes were checked in the SASS (ptxas for sm_90): the
transpose has no shared-memory bank conflict; the matmul has no spill, 64 FFMA per 4 LDS.128 in
its inner loop.

:func:`bank_conflicts` counts, in CPU mode, the shared-memory bank conflicts of a launch from the
race detector's recording (:func:`autograder.races.record`): the chapter's padded-tile lesson can
be measured without a GPU.

Files: ``specs.py`` the graded exercises, ``references.py`` the reference kernels and the bench
variants, ``notebook.py`` the bank-conflict count the notebook runs.
"""

from autograder.problems.ch06.notebook import bank_conflicts, bank_table
from autograder.problems.ch06.references import (banded_transpose, big_tile_bk8, big_tile_bk16,
                                                 big_tile_pairs, big_tile_single, pair_transpose,
                                                 persistent_transpose_1buf,
                                                 persistent_transpose_2buf,
                                                 persistent_transpose_banded, plain_transpose,
                                                 tuned_register_tiled, wide_transpose_8,
                                                 wide_transpose_16)
from autograder.problems.ch06.specs import (SPEED_TRANSPOSE, matmul_register_tiled,
                                            sectors_per_warp, sectors_spec, transpose_naive,
                                            transpose_tiled)

__all__ = ["PROBLEMS", "SPEED_TRANSPOSE", "bank_conflicts", "bank_table", "matmul_register_tiled",
           "sectors_per_warp", "sectors_spec", "transpose_naive", "transpose_tiled",
           "tuned_register_tiled"]

PROBLEMS = (transpose_naive, sectors_per_warp, transpose_tiled, matmul_register_tiled)

BENCH_VARIANTS = {
    "transpose_tiled": {"exercise solution (signed indices)": plain_transpose(True),
                        "unpadded 32 × 32 tile (bank conflicts)": plain_transpose(False),
                        "64 × 64 tile, 32 × 16 threads (8 elements each way per thread)":
                            wide_transpose_16,
                        "64 × 64 tile, 32 × 8 threads (16 elements each way per thread)":
                            wide_transpose_8,
                        # 32 × 32 tiles, 32 × 8 threads, 1-D grids of their own (references.py,
                        # PersistentGrid / LinearGrid): what each fixes is in its docstring.
                        "persistent, 8 blocks/SM, 2 shared tiles, next tile's loads in registers":
                            persistent_transpose_2buf,
                        "persistent, 8 blocks/SM, 1 shared tile, next tile's loads in registers":
                            persistent_transpose_1buf,
                        "persistent, 2 shared tiles, tiles in bands of 32 tile rows":
                            persistent_transpose_banded,
                        "one block per tile, blocks in bands of 32 tile rows": banded_transpose,
                        "8-byte loads and stores (uint64 pairs), 32 × 64 tile, 32 × 8 threads":
                            pair_transpose},
    "matmul_register_tiled": {
        "tuned (128-bit shared loads, BK = 16, unsigned indices; ungraded)": tuned_register_tiled,
        # 128 × 128 tiles per block of 256 threads, launched on a grid of their own (references.py,
        # OwnLaunch): what each is meant to fix is in its factory's docstring.
        "128 × 128 tiles, 256 threads, 32 × 64 warp tiles, BK = 8, double-buffered (ungraded)":
            big_tile_bk8,
        "128 × 128 tiles, 256 threads, 32 × 64 warp tiles, BK = 16, double-buffered (ungraded)":
            big_tile_bk16,
        "128 × 128 tiles, 32 × 64 warp tiles, BK = 8, double-buffered, 8-byte global loads "
        "(ungraded)": big_tile_pairs,
        "128 × 128 tiles, 32 × 64 warp tiles, BK = 8, one shared buffer (ungraded)":
            big_tile_single,
    },
}
