# bank: reads the ELL part row-major (slot s of row t at t · width + s) while it is column-major (s · rows + t); the COO part is right; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_hybrid_kernel(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y):
    t = cuda.grid(1)
    rows = y.size
    if t < rows:
        width = ell_col.size // rows
        acc = float32(0.0)
        for s in range(ell_len[t]):
            acc += ell_val[t * width + s] * x[ell_col[t * width + s]]
        cuda.atomic.add(y, t, acc)
    elif t - rows < coo_val.size:
        k = t - rows
        cuda.atomic.add(y, coo_row[k], coo_val[k] * x[coo_col[k]])
