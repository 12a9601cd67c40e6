# bank: computes the ELL part only (14.3's kernel with an atomic add) and forgets the COO nonzeros: every row longer than the width comes out short; it must lose the points.
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
