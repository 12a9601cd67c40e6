# bank: no bounds check, so the threads of the partial blocks read and write outside the matrices; it must lose the points.
# naive: none
@cuda.jit
def transpose_naive_kernel(inp, out):
    col, row = cuda.grid(2)
    out[col, row] = inp[row, col]
