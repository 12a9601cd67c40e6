# bank: PMPP's first tree in shared memory (interleaved: thread t owns slot 2t, strides 1, 2, 4, ...; divergent but correct), two values loaded per thread without adding them first, one atomic per block; correct, full marks.
# naive: none
from numba import float32

SEGMENT_MAX = 2 * 1024      # two slots per thread, at most 1024 threads


@cuda.jit
def reduce_tree_kernel(x, out):
    s = cuda.shared.array(SEGMENT_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = 2 * T * cuda.blockIdx.x
    s[t] = x[start + t] if start + t < x.size else float32(0)
    s[t + T] = x[start + T + t] if start + T + t < x.size else float32(0)
    cuda.syncthreads()
    stride = 1
    while stride <= T:
        if t % stride == 0:
            s[2 * t] += s[2 * t + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])
