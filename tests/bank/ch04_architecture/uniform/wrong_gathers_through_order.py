# bank: reads x_sorted[order[t]] and kind_sorted[order[t]] as if the inputs were in the original order, so each result uses another element's value and kind; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def uniform_kernel(x_sorted, kind_sorted, order, a, b, out):
    t = cuda.grid(1)
    if t < x_sorted.size:
        i = order[t]
        xi = x_sorted[i]
        if kind_sorted[i] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xi
        out[i] = acc
