# bank: col and row from cuda.grid(2), a float32 accumulator over k < A.shape[1], one store; correct, full marks.
# naive: none
@cuda.jit
def matmul_kernel(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
