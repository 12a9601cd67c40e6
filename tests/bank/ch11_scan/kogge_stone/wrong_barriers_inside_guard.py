# bank: Kogge-Stone with the whole scan inside `if i < x.size:`, so in the last, partial section the threads past the end skip the barriers the others wait at (and never zero their slot, which no thread that stays reads); the simulator's sums are right, but in CUDA a barrier not every thread of the block reaches is undefined behaviour; CPU mode stops it naming the barrier and the threads that finished; it must lose the points.
# naive: allclose
from numba import float32

MAX_THREADS = 256


@cuda.jit
def kogge_stone_kernel(x, y):
    xy = cuda.shared.array(MAX_THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        xy[t] = x[i]
        stride = 1
        while stride < cuda.blockDim.x:
            cuda.syncthreads()
            temp = xy[t]
            if t >= stride:
                temp += xy[t - stride]
            cuda.syncthreads()
            xy[t] = temp
            stride *= 2
        y[i] = xy[t]
