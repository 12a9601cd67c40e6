# bank: no `if i < y.size`: the threads past the last row read row_ptr[i + 1] outside the array and store past the end of y; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_kernel(row_ptr, col, val, x, y):
    i = cuda.grid(1)
    acc = float32(0.0)
    for k in range(row_ptr[i], row_ptr[i + 1]):
        acc += val[k] * x[col[k]]
    y[i] = acc
