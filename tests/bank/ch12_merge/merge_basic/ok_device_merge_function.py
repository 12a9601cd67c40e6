# bank: co-rank as PMPP writes it, and a sequential-merge device function that merges while both inputs have keys and then copies what is left of either; explicit thread index, early return; correct, full marks.
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


@cuda.jit(device=True)
def merge_sequential(A, i, i_end, B, j, j_end, C, src, k, m):
    while i < i_end and j < j_end:
        if A[i] <= B[j]:
            C[k] = A[i]
            src[k] = i
            i += 1
        else:
            C[k] = B[j]
            src[k] = m + j
            j += 1
        k += 1
    while i < i_end:
        C[k] = A[i]
        src[k] = i
        i += 1
        k += 1
    while j < j_end:
        C[k] = B[j]
        src[k] = m + j
        j += 1
        k += 1


@cuda.jit
def merge_basic_kernel(A, B, C, src):
    t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    m, n = A.size, B.size
    per = -(-(m + n) // (cuda.gridDim.x * cuda.blockDim.x))
    k0 = t * per
    if k0 >= m + n:
        return
    k1 = min(k0 + per, m + n)
    i0 = co_rank(k0, A, m, B, n)
    i1 = co_rank(k1, A, m, B, n)
    merge_sequential(A, i0, i1, B, k0 - i0, k1 - i1, C, src, k0, m)
