# bank: a grid-stride loop over the rows (any grid covers them), each row's bounds read once into locals; correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_kernel(row_ptr, col, val, x, y):
    for i in range(cuda.grid(1), y.shape[0], cuda.gridsize(1)):
        start = row_ptr[i]
        stop = row_ptr[i + 1]
        acc = float32(0.0)
        for k in range(start, stop):
            acc += val[k] * x[col[k]]
        y[i] = acc
