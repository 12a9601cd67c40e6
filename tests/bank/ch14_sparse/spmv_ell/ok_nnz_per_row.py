# bank: one thread per row over its nnz_per_row[i] real slots, slot t of row i at t * rows + i (column-major); correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def spmv_ell_kernel(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    if i < rows:
        acc = float32(0.0)
        for t in range(nnz_per_row[i]):
            acc += val[t * rows + i] * x[col[t * rows + i]]
        y[i] = acc
