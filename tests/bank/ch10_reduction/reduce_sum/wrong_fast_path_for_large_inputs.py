# bank: a plain grid-stride sum for n < 5000, and for larger inputs a "faster" path that adds four elements per loop step but stops before the last partial group, so up to 4 · gridsize - 1 trailing elements are never added; every visible CPU size takes the plain path; the hidden size 4 times the largest visible one takes the other and fails; it must lose the points.
# naive: none
from numba import float32, uint64

MAX_WARPS = 32


@cuda.jit
def reduce_sum_kernel(x, out):
    partials = cuda.shared.array(MAX_WARPS, float32)
    acc = float32(0)
    n = x.size
    stride = cuda.gridsize(1)
    if n < 5000:
        for i in range(cuda.grid(1), n, stride):
            acc += x[i]
    else:
        i = cuda.grid(1)
        while i + 3 * stride < n - 4 * stride:          # wrong bound: drops the last groups
            acc += (x[i] + x[i + stride]) + (x[i + 2 * stride] + x[i + 3 * stride])
            i += 4 * stride
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    offset = cuda.warpsize // 2
    while offset > 0:
        acc += cuda.shfl_down_sync(mask, acc, offset)
        offset //= 2
    if cuda.threadIdx.x % cuda.warpsize == 0:
        partials[cuda.threadIdx.x // cuda.warpsize] = acc
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        total = float32(0)
        for w in range((cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize):
            total += partials[w]
        cuda.atomic.add(out, 0, total)
