# bank: no `if i < n`, so the threads of the last block past n index out of bounds (n is never a multiple of the block); it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def divergent_kernel(x, kind, a, b, out):
    i = cuda.grid(1)
    xi = x[i]
    acc = float32(0)
    if kind[i] == 0:
        for k in range(a.size):
            acc = acc * xi + a[k]
    else:
        acc = float32(1)
        for k in range(b.size):
            acc *= float32(1) + b[k] * xi
    out[i] = acc
