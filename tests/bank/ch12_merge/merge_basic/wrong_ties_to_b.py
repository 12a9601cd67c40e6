# bank: a stable co-rank, but the merge loop takes A[i] only when A[i] < B[j], so at a tie B's key comes out first: every key of C is right, src is not (unstable); a test that compares keys only, or uses distinct keys, passes it; it must lose the points.
# naive: allclose
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
def merge_basic_kernel(A, B, C, src):
    m, n = A.size, B.size
    total = m + n
    per = (total + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    k0 = min(cuda.grid(1) * per, total)
    k1 = min(k0 + per, total)
    i = co_rank(k0, A, m, B, n)
    i_end = co_rank(k1, A, m, B, n)
    j = k0 - i
    j_end = k1 - i_end
    for k in range(k0, k1):
        if j >= j_end or (i < i_end and A[i] < B[j]):
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1
