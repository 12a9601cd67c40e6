# bank: loops over range(row_ptr[i], row_ptr[i + 1] + 1) (kept inside the arrays), so every row also takes the first nonzero of the next row: the classic row_ptr off-by-one; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_kernel(row_ptr, col, val, x, y):
    i = cuda.grid(1)
    if i < y.size:
        acc = float32(0.0)
        for k in range(row_ptr[i], min(row_ptr[i + 1] + 1, val.size)):
            acc += val[k] * x[col[k]]
        y[i] = acc
