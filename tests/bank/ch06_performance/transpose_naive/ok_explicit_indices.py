# bank: row and column from blockIdx, blockDim and threadIdx, an early return for threads outside the input, the guard written with the output's shape the right way round; correct, full marks.
# naive: none
@cuda.jit
def transpose_naive_kernel(inp, out):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row >= out.shape[1] or col >= out.shape[0]:
        return
    out[col, row] = inp[row, col]
