# bank: one thread per element, float32 accumulators, the power form by Horner's rule and the product form on the kind's branch; correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def divergent_kernel(x, kind, a, b, out):
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        if kind[i] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xi
        out[i] = acc
