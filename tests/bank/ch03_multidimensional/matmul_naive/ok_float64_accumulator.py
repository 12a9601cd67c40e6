# bank: explicit block/thread ids, a float64 accumulator (more accurate than needed) over k < B.shape[0]; correct, full marks.
# naive: none
@cuda.jit
def matmul_kernel(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        acc = 0.0
        for k in range(B.shape[0]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
