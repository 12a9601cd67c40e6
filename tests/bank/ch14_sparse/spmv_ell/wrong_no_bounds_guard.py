# bank: no `if i < rows`: the threads past the last row read nnz_per_row[i] outside the array and store past the end of y; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_ell_kernel(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    acc = float32(0.0)
    for t in range(nnz_per_row[i]):
        acc += val[t * rows + i] * x[col[t * rows + i]]
    y[i] = acc
