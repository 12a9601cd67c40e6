# bank: states TILE = 16 and uses it everywhere but the inner loop, left at `range(8)` from an 8 × 8 version: right only at TILE = 8, so at its own tile side each sum misses half of every phase's products; it must lose the points.
# naive: none
from numba import float32

TILE = 16


@cuda.jit
def tiled_matmul_kernel(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        a_col, b_row = t * TILE + tx, t * TILE + ty
        sA[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < A.shape[1] else 0
        sB[ty, tx] = B[b_row, col] if b_row < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()
        for k in range(8):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
