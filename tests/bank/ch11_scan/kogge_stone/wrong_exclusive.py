# bank: double-buffered Kogge-Stone that loads x[i - 1] (0 for the first thread), PMPP's exclusive scan, where the exercise asks for the inclusive one; off by one element everywhere; it must lose the points.
# naive: none
from numba import float32

MAX_THREADS = 256


@cuda.jit
def kogge_stone_kernel(x, y):
    buf = cuda.shared.array((2, MAX_THREADS), float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t > 0 and i - 1 < x.size:
        buf[0, t] = x[i - 1]
    else:
        buf[0, t] = 0
    cuda.syncthreads()
    src = 0
    stride = 1
    while stride < cuda.blockDim.x:
        if t >= stride:
            buf[1 - src, t] = buf[src, t] + buf[src, t - stride]
        else:
            buf[1 - src, t] = buf[src, t]
        cuda.syncthreads()
        src = 1 - src
        stride *= 2
    if i < x.size:
        y[i] = buf[src, t]
