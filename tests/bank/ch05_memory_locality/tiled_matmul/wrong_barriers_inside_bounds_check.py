# bank: the whole tile loop, barriers included, sits inside `if row < M and col < N:`, so threads of an edge block past the matrix never reach the barriers that the others wait at (nor load their zero padding); a test with every side a multiple of TILE, as textbook tests have it, has no such threads and passes it; in CUDA a barrier not every thread of the block reaches is undefined behaviour, and CPU mode stops it at the first edge block, naming the barrier and the threads that skipped it; it must lose the points.
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
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0)
        for t in range((A.shape[1] + TILE - 1) // TILE):
            a_col, b_row = t * TILE + tx, t * TILE + ty
            sA[ty, tx] = A[row, a_col] if a_col < A.shape[1] else 0
            sB[ty, tx] = B[b_row, col] if b_row < B.shape[0] else 0
            cuda.syncthreads()
            for k in range(TILE):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
        C[row, col] = acc
