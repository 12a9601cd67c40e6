# bank: Kogge-Stone in place without double buffering, one barrier per step: thread t reads element t - stride while thread t - stride overwrites it in the same step; caught by the race detector in CPU mode; it must lose the points.
# naive: none
from numba import float32

MAX_THREADS = 256


@cuda.jit
def kogge_stone_kernel(x, y):
    xy = cuda.shared.array(MAX_THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    xy[t] = x[i] if i < x.size else float32(0)
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            xy[t] += xy[t - stride]
        stride *= 2
    if i < x.size:
        y[i] = xy[t]
