# bank: reads slot t of row i at i * width + t (row-major) from the column-major arrays: other rows' values and columns (and padding columns -1); it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_ell_kernel(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    if i < rows:
        width = col.size // rows
        acc = float32(0.0)
        for t in range(nnz_per_row[i]):
            acc += val[i * width + t] * x[col[i * width + t]]
        y[i] = acc
