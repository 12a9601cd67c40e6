# bank: computes the strided 8 × 8 tile of C (rows ty + 8·i, columns tx + 8·j) but stores it as if it owned 8 consecutive rows and columns (8·ty + i, 8·tx + j); it must lose the points.
# naive: none
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
            sA[k, i] = A[row0 + i, k0 + k] if row0 + i < M and k0 + k < K else 0
            k, j = e // BN, e % BN
            sB[k, j] = B[k0 + k, col0 + j] if k0 + k < K and col0 + j < N else 0
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
            row, col = row0 + 8 * ty + i, col0 + 8 * tx + j
            if row < M and col < N:
                C[row, col] = acc[i, j]
