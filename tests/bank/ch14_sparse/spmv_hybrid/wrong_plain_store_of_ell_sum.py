# bank: the ELL thread stores its sum with y[t] = acc while COO threads add into the same rows atomically in the same launch: a COO add that lands before the store is erased (the simulator's order often hides it); CPU mode's race detector stops it every time, so it must lose the points.
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
        y[t] = acc
    elif t - rows < coo_val.size:
        k = t - rows
        cuda.atomic.add(y, coo_row[k], coo_val[k] * x[coo_col[k]])
