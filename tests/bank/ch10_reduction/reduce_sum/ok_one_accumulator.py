# bank: the textbook grid-stride sum: one accumulator in a range loop, shuffles inside each warp, then thread 0 adds the warps' partial sums in a plain loop and makes the block's one atomic; correct, full marks.
# naive: none
from numba import float32, uint64

MAX_WARPS = 32


@cuda.jit
def reduce_sum_kernel(x, out):
    partials = cuda.shared.array(MAX_WARPS, float32)
    acc = float32(0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
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
