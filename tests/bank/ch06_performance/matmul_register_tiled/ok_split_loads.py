# bank: the register-tiled matmul with the A and B tile loads in separate loops (if/else zero padding), 1-D register arrays indexed by constants, and the k loop stopping at K in the last tile; correct, full marks.
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
    tid = ty * cuda.blockDim.x + tx
    M, K = A.shape
    N = B.shape[1]
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = float32(0)
    for k0 in range(0, K, BK):
        for e in range(tid, BM * BK, THREADS):
            r, c = row0 + e // BK, k0 + e % BK
            if r < M and c < K:
                sA[e % BK, e // BK] = A[r, c]
            else:
                sA[e % BK, e // BK] = float32(0)
        for e in range(tid, BK * BN, THREADS):
            r, c = k0 + e // BN, col0 + e % BN
            if r < K and c < N:
                sB[e // BN, e % BN] = B[r, c]
            else:
                sB[e // BN, e % BN] = float32(0)
        cuda.syncthreads()
        for k in range(min(BK, K - k0)):
            for i in range(TM):
                a[i] = sA[k, ty + 8 * i]
            for j in range(TN):
                b[j] = sB[k, tx + 8 * j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + ty + 8 * i
        if r < M:
            for j in range(TN):
                c = col0 + tx + 8 * j
                if c < N:
                    C[r, c] = acc[i, j]
