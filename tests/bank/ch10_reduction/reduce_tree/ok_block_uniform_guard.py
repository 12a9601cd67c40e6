# bank: the tree, barriers included, inside `if start < x.size:`, a condition that is the same for every thread of a block (it depends on the block's index only), so every thread of a block reaches every barrier or none does: legal CUDA, and the barrier checker must not flag it; correct, full marks.
# naive: none
from numba import float32

BLOCK_MAX = 1024


@cuda.jit
def reduce_tree_kernel(x, out):
    s = cuda.shared.array(BLOCK_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = 2 * T * cuda.blockIdx.x
    if start < x.size:                       # the whole block, or none of it
        i = start + t
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
