# bank: TILE = 32 and a single phase, no loop along K: it loads the first 32 columns of A and rows of B once, so it is right for every K <= 32 (all of a test's matrices, when their sides stay below 32 to keep the simulator quick) and wrong beyond; it must lose the points.
# naive: none
from numba import float32

TILE = 32


@cuda.jit
def tiled_matmul_kernel(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    sA[ty, tx] = A[row, tx] if row < A.shape[0] and tx < A.shape[1] else 0
    sB[ty, tx] = B[ty, col] if ty < B.shape[0] and col < B.shape[1] else 0
    cuda.syncthreads()
    acc = float32(0)
    for k in range(TILE):
        acc += sA[ty, k] * sB[k, tx]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
