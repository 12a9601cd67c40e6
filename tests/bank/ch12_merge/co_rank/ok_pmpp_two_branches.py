# bank: PMPP's shape of co-rank: start at i = min(k, m) and move i down while A[i-1] > B[j], up while B[j-1] >= A[i], by half the remaining range each time; stable and correct, full marks.
# naive: none
@cuda.jit(device=True)
def co_rank(k, A, m, B, n):
    i = min(k, m)
    j = k - i
    i_low = max(0, k - n)
    j_low = max(0, k - m)
    while True:
        if i > 0 and j < n and A[i - 1] > B[j]:
            delta = (i - i_low + 1) // 2
            j_low = j
            i -= delta
            j += delta
        elif j > 0 and i < m and B[j - 1] >= A[i]:
            delta = (j - j_low + 1) // 2
            i_low = i
            i += delta
            j -= delta
        else:
            return i
