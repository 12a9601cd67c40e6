# bank: transposes inside each tile but writes the tile back at the block's own position instead of the mirrored one (blockIdx.x and blockIdx.y not swapped for the stores); right only on a single tile; it must lose the points.
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
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < inp.shape[0] and col < inp.shape[1]:
            tile[ty + j, tx] = inp[row + j, col]
    cuda.syncthreads()
    for j in range(0, TILE, BLOCK_ROWS):
        if row + j < out.shape[0] and col < out.shape[1]:
            out[row + j, col] = tile[tx, ty + j]
