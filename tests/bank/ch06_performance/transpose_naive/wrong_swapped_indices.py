# bank: a transpose with swapped indices (guarded with the output's shape, reading inp[col, row]); right on every square matrix, leaves elements unwritten on a non-square one; it must lose the points.
# naive: none
@cuda.jit
def transpose_naive_kernel(inp, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = inp[col, row]
