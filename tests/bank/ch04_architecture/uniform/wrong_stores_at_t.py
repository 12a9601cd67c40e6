# bank: exercise 4.2's kernel on the grouped inputs: stores at out[t], the sorted position, so results land at the wrong places; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def uniform_kernel(x_sorted, kind_sorted, order, a, b, out):
    t = cuda.grid(1)
    if t < x_sorted.size:
        xt = x_sorted[t]
        if kind_sorted[t] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xt + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xt
        out[t] = acc
