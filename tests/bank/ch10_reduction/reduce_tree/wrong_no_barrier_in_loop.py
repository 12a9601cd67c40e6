# bank: the convergent tree without the barrier after each step, so a thread may read a slot that another warp has not added into yet; caught by the race detector in CPU mode every time; it must lose the points.
# naive: none
from numba import float32

BLOCK_MAX = 1024


@cuda.jit
def reduce_tree_kernel(x, out):
    s = cuda.shared.array(BLOCK_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    i = 2 * T * cuda.blockIdx.x + t
    v = float32(0)
    if i < x.size:
        v = x[i]
    if i + T < x.size:
        v += x[i + T]
    s[t] = v
    cuda.syncthreads()
    stride = T // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])
