# bank: thread t on sorted element t, float32 arithmetic, the result stored at out[order[t]]; correct, full marks.
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
        out[order[t]] = acc
