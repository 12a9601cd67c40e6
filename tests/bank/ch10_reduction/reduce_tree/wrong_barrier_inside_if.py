# bank: the convergent tree with its cuda.syncthreads() inside `if t < stride:`, so only the threads still adding reach the barrier; the CUDA simulator releases it anyway and the sums come out right, but in CUDA a barrier not reached by every thread of the block is undefined behaviour; CPU mode stops it like a race, naming the line and the threads that skipped it; it must lose the points.
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
            cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])
