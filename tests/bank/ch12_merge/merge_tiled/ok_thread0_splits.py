# bank: the block's two split points found once by thread 0 and shared (a barrier after), both tiles loaded in one loop over TILE with guards, a ceil-divided share per thread; correct, full marks.
# naive: none
from numba import float32, int64

TILE = 64


@cuda.jit(device=True)
def co_rank(k, A, m, B, n):
    lo = max(0, k - n)
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        if A[i] <= B[k - i - 1]:
            lo = i + 1
        else:
            hi = i
    return lo


@cuda.jit
def merge_tiled_kernel(A, B, C, src):
    sA = cuda.shared.array(TILE, float32)
    sB = cuda.shared.array(TILE, float32)
    ends = cuda.shared.array(2, int64)
    m, n = A.size, B.size
    t, nt = cuda.threadIdx.x, cuda.blockDim.x
    per = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    k = min(cuda.blockIdx.x * per, m + n)
    k_end = min(k + per, m + n)
    if t == 0:
        ends[0] = co_rank(k, A, m, B, n)
        ends[1] = co_rank(k_end, A, m, B, n)
    cuda.syncthreads()
    a, a_end = ends[0], ends[1]
    b, b_end = k - a, k_end - a_end
    while k < k_end:
        na, nb = min(TILE, a_end - a), min(TILE, b_end - b)
        for x in range(t, TILE, nt):
            if x < na:
                sA[x] = A[a + x]
            if x < nb:
                sB[x] = B[b + x]
        cuda.syncthreads()
        out = min(TILE, k_end - k)
        share = (out + nt - 1) // nt
        lo = min(t * share, out)
        hi = min(lo + share, out)
        i = co_rank(lo, sA, na, sB, nb)
        i_end = co_rank(hi, sA, na, sB, nb)
        j, j_end = lo - i, hi - i_end
        for q in range(lo, hi):
            if j >= j_end or (i < i_end and sA[i] <= sB[j]):
                C[k + q] = sA[i]
                src[k + q] = a + i
                i += 1
            else:
                C[k + q] = sB[j]
                src[k + q] = m + b + j
                j += 1
        used = co_rank(out, sA, na, sB, nb)
        cuda.syncthreads()
        a += used
        b += out - used
        k += out
