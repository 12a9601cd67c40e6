# bank: the product form for kind 0 and the power form for kind 1; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def divergent_kernel(x, kind, a, b, out):
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        if kind[i] == 0:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xi
        else:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        out[i] = acc
