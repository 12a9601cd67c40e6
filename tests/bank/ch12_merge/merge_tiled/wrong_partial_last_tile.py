# bank: counts a block's tiles as (k_end - k) // TILE, one short whenever the segment is not a multiple of TILE, so the last, partial tile of every segment is never merged (an off-by-one at the tile's end); a test whose sizes are whole tiles passes it; it must lose the points.
# naive: allclose
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
    for _ in range((k_end - k) // TILE):
        na = min(TILE, a_end - a)
        nb = min(TILE, b_end - b)
        for x in range(t, na, nt):
            sA[x] = A[a + x]
        for x in range(t, nb, nt):
            sB[x] = B[b + x]
        cuda.syncthreads()
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
