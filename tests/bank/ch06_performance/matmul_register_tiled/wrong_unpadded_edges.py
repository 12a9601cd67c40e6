# bank: guarded tile loads with no else, so past K (and past M, N) the tiles keep the previous tile's values; right whenever the sides are multiples of the tiles; it must lose the points.
# naive: allclose
from numba import float32

BM = BN = 64
BK = 8
TM = TN = 8
THREADS = 64


@cuda.jit
def matmul_register_tiled_kernel(A, B, C):
    sA = cuda.shared.array((BK, BM), float32)
    sB = cuda.shared.array((BK, BN), float32)
    acc = cuda.local.array((TM, TN), float32)
    a = cuda.local.array(TM, float32)
    b = cuda.local.array(TN, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 8 + tx
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    for k0 in range(0, K, BK):
        for e in range(tid, BM * BK, THREADS):
            i, k = e // BK, e % BK
            if row0 + i < M and k0 + k < K:
                sA[k, i] = A[row0 + i, k0 + k]
            k, j = e // BN, e % BN
            if k0 + k < K and col0 + j < N:
                sB[k, j] = B[k0 + k, col0 + j]
        cuda.syncthreads()
        for k in range(BK):
            for i in range(TM):
                a[i] = sA[k, ty + 8 * i]
            for j in range(TN):
                b[j] = sB[k, tx + 8 * j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()
    for i in range(TM):
        for j in range(TN):
            row, col = row0 + ty + 8 * i, col0 + tx + 8 * j
            if row < M and col < N:
                C[row, col] = acc[i, j]
