# bank: a correct grid-stride sum except for its shuffles' mask, taken from cuda.activemask() after the loop: activemask() names only the lanes converged at that instant, not the lanes that must take part, so the warps' sums may silently be partial on a GPU (where a typical test usually passes); CPU mode splits the warp there and stops the first shuffle that reads outside the mask; it must lose the points.
# naive: none
from numba import float32

MAX_WARPS = 32


@cuda.jit
def reduce_sum_kernel(x, out):
    partials = cuda.shared.array(MAX_WARPS, float32)
    acc = float32(0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = cuda.threadIdx.x // cuda.warpsize
    mask = cuda.activemask()
    offset = cuda.warpsize // 2
    while offset > 0:
        acc += cuda.shfl_down_sync(mask, acc, offset)
        offset //= 2
    if lane == 0:
        partials[warp] = acc
    cuda.syncthreads()
    if warp == 0:
        nwarps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
        acc = partials[lane] if lane < nwarps else float32(0)
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(mask, acc, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, acc)
