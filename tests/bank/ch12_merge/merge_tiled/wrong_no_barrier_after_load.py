# bank: the tiled merge without the barrier between loading the tiles and searching them: a thread reads keys of sA or sB that another thread has not stored yet (often right on a GPU, by luck); CPU mode's race detector catches it every time; it must lose the points.
# naive: none
from numba import float32

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
    m, n = A.size, B.size
    t, nt = cuda.threadIdx.x, cuda.blockDim.x
    per = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    k = min(cuda.blockIdx.x * per, m + n)
    k_end = min(k + per, m + n)
    a = co_rank(k, A, m, B, n)
    a_end = co_rank(k_end, A, m, B, n)
    b = k - a
    b_end = k_end - a_end
    vt = (TILE + nt - 1) // nt
    while k < k_end:
        na = min(TILE, a_end - a)
        nb = min(TILE, b_end - b)
        for x in range(t, na, nt):
            sA[x] = A[a + x]
        for x in range(t, nb, nt):
            sB[x] = B[b + x]
        out = min(TILE, k_end - k)
        lo = min(t * vt, out)
        hi = min(lo + vt, out)
        i = co_rank(lo, sA, na, sB, nb)
        i_end = co_rank(hi, sA, na, sB, nb)
        j = lo - i
        j_end = hi - i_end
        for q in range(k + lo, k + hi):
            if j >= j_end or (i < i_end and sA[i] <= sB[j]):
                C[q] = sA[i]
                src[q] = a + i
                i += 1
            else:
                C[q] = sB[j]
                src[q] = m + b + j
                j += 1
        used = co_rank(out, sA, na, sB, nb)
        cuda.syncthreads()
        a += used
        b += out - used
        k += out
