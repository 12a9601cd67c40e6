# bank: one thread per row, the row's products added in a float32 local over range(row_ptr[i], row_ptr[i + 1]) and stored once; correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_kernel(row_ptr, col, val, x, y):
    i = cuda.grid(1)
    if i < y.size:
        acc = float32(0.0)
        for k in range(row_ptr[i], row_ptr[i + 1]):
            acc += val[k] * x[col[k]]
        y[i] = acc
