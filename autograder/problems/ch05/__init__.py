"""Chapter 5 (PMPP ch. 5, Memory architecture and data locality): a tiled matrix multiplication
with shared memory, and the roofline bound on a matmul's run time.

The tiled kernel's learner writes only the kernel, with a module constant ``TILE`` (8, 16 or 32,
their choice) for its ``cuda.shared.array((TILE, TILE), float32)`` tiles; the problem launches it
with blocks of ``(TILE, TILE)`` threads, ``TILE`` read from the kernel's globals when it is
launched (:func:`specs.tile_of`), and a grid of ``(ceil(N / TILE), ceil(M / TILE))`` blocks (x
across C's columns, y down its rows). The spec, the inputs and the tolerance are chapter 3's
matmul. In CPU mode the race detector (:mod:`autograder.races`) runs during every case, so a
missing ``cuda.syncthreads()`` fails deterministically.

Files: ``specs.py`` the graded exercises, ``references.py`` the reference kernel (TILE = 8),
``notebook.py`` :func:`with_tile` for the notebook's sweep over tile sides; the matmul's spec,
inputs and tolerance (shared with chapters 3 and 6) are in :mod:`autograder.problems.kit.matmul`.
"""

from autograder.problems.ch05.notebook import with_tile
from autograder.problems.ch05.references import TILE, TILES
from autograder.problems.ch05.specs import (matmul_bytes, matmul_time_bound, tile_of,
                                            tiled_matmul)

__all__ = ["PROBLEMS", "TILE", "TILES", "matmul_bytes", "matmul_time_bound", "tile_of",
           "tiled_matmul", "with_tile"]

PROBLEMS = (tiled_matmul, matmul_time_bound)
