# bank: multiplies and accumulates in float16; close, but far outside float32's error bound; it must lose the points.
# naive: none
@cuda.jit
def matmul_kernel(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float16(0)
        for k in range(A.shape[1]):
            acc += np.float16(A[row, k]) * np.float16(B[k, col])
        C[row, col] = np.float32(acc)
