# bank: the binary search with A[i] < B[k-i-1] instead of <=, so equal keys of B count as coming first: right on distinct keys, wrong at every tie (an unstable merge's co-rank); it must lose the points.
# naive: allclose
@cuda.jit(device=True)
def co_rank(k, A, m, B, n):
    lo = max(0, k - n)
    hi = min(k, m)
    while lo < hi:
        i = (lo + hi) // 2
        if A[i] < B[k - i - 1]:
            lo = i + 1
        else:
            hi = i
    return lo
