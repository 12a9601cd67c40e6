# bank: threads whose elements lie past the end return before the tree, and the tree adds only slots of threads that stayed (`t + stride < m`), so every sum is right; but in the last block of most sizes only some threads reach the tree's barriers, which in CUDA is undefined behaviour (exited threads skip a barrier the others wait at); CPU mode stops it naming the barrier and the threads that finished; it must lose the points.
# naive: none
from numba import float32

BLOCK_MAX = 1024


@cuda.jit
def reduce_tree_kernel(x, out):
    s = cuda.shared.array(BLOCK_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = 2 * T * cuda.blockIdx.x
    i = start + t
    if i >= x.size:
        return                       # nothing to load: leave early (skips the barriers below)
    m = min(T, x.size - start)       # threads of this block that stayed
    v = x[i]
    if i + T < x.size:
        v += x[i + T]
    s[t] = v
    cuda.syncthreads()
    stride = 1
    while stride < m:
        stride *= 2
    stride //= 2
    while stride > 0:
        if t < stride and t + stride < m:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])
