# bank: Kogge-Stone on one buffer, PMPP's way: each step reads the left neighbour into a register, then a barrier, the write, and a second barrier; correct, full marks.
# naive: none
from numba import float32

MAX_THREADS = 256


@cuda.jit
def kogge_stone_kernel(x, y):
    xy = cuda.shared.array(MAX_THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        xy[t] = x[i]
    else:
        xy[t] = 0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        temp = xy[t]
        if t >= stride:
            temp += xy[t - stride]
        cuda.syncthreads()
        xy[t] = temp
        stride *= 2
    if i < x.size:
        y[i] = xy[t]
