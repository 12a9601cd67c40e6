# bank: goes over all width = col.size // rows slots of its row and skips the padding by its column -1, never reading nnz_per_row; correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def spmv_ell_kernel(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    if i < rows:
        width = col.size // rows
        acc = float32(0.0)
        for t in range(width):
            c = col[t * rows + i]
            if c >= 0:
                acc += val[t * rows + i] * x[c]
        y[i] = acc
