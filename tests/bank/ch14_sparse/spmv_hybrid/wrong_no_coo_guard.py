# bank: the threads past the rows take COO nonzero t − rows without checking that it exists: the last block's extra threads read coo_row past its end; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_hybrid_kernel(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y):
    t = cuda.grid(1)
    rows = y.size
    if t < rows:
        acc = float32(0.0)
        for s in range(ell_len[t]):
            acc += ell_val[s * rows + t] * x[ell_col[s * rows + t]]
        cuda.atomic.add(y, t, acc)
    else:
        k = t - rows
        cuda.atomic.add(y, coo_row[k], coo_val[k] * x[coo_col[k]])
