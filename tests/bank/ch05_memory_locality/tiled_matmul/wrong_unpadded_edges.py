# bank: guarded tile loads with no else, so past K the last tile keeps the previous tile's values; right whenever K is a multiple of TILE (as in a typical test), wrong otherwise; it must lose the points.
# naive: allclose
from numba import float32

TILE = 8


@cuda.jit
def tiled_matmul_kernel(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        if row < A.shape[0] and t * TILE + tx < A.shape[1]:
            sA[ty, tx] = A[row, t * TILE + tx]
        if t * TILE + ty < B.shape[0] and col < B.shape[1]:
            sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
