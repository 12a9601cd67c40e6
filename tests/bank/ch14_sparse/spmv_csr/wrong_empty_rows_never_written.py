# bank: returns early for an empty row, so its y[i] is never stored (y is not zeroed in this exercise: it stays NaN); it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_kernel(row_ptr, col, val, x, y):
    i = cuda.grid(1)
    if i >= y.size or row_ptr[i] == row_ptr[i + 1]:
        return
    acc = float32(0.0)
    for k in range(row_ptr[i], row_ptr[i + 1]):
        acc += val[k] * x[col[k]]
    y[i] = acc
