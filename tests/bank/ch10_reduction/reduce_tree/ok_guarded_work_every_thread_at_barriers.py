# bank: threads past the end stay in the kernel (their slot holds 0) and every thread reaches every barrier of the tree, whose work alone is guarded by `if t < stride`; the barrier checker must not flag it; correct, full marks.
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
