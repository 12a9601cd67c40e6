# bank: reads slot t of sorted row i at t * rows + i, as if every section were rows long (ELL's layout) instead of t_ptr[t] + i; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_jds_kernel(perm, t_ptr, col, val, x, y):
    i = cuda.grid(1)
    rows = perm.size
    if i < rows:
        acc = float32(0.0)
        t = 0
        while t < t_ptr.size - 1 and t_ptr[t] + i < t_ptr[t + 1]:
            k = t * rows + i
            if k < val.size:
                acc += val[k] * x[col[k]]
            t += 1
        y[perm[i]] = acc
