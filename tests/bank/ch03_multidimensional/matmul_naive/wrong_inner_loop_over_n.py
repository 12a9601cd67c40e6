# bank: the inner loop runs over C's columns (N) instead of K; on non-square input it sums too few terms or runs off the end of A; it must lose the points.
# naive: none
@cuda.jit
def matmul_kernel(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float32(0)
        for k in range(C.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
