# bank: forgets the coarsening loop: each thread of the 32 × 8 block moves one element, so only 8 of every 32 rows of each tile are transposed; it must lose the points.
# naive: none
from numba import float32

TILE = 32
BLOCK_ROWS = 8
TILE_PAD = TILE + 1


@cuda.jit
def transpose_tiled_kernel(inp, out):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    if row < inp.shape[0] and col < inp.shape[1]:
        tile[ty, tx] = inp[row, col]
    cuda.syncthreads()
    col, row = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = tile[tx, ty]
