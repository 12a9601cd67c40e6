# bank: stores sorted row i's sum at y[i] instead of y[perm[i]]: the right sums in the wrong rows; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_jds_kernel(perm, t_ptr, col, val, x, y):
    i = cuda.grid(1)
    if i < perm.size:
        acc = float32(0.0)
        t = 0
        while t < t_ptr.size - 1 and t_ptr[t] + i < t_ptr[t + 1]:
            acc += val[t_ptr[t] + i] * x[col[t_ptr[t] + i]]
            t += 1
        y[i] = acc
