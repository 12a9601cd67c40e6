# bank: counts the warps as n // warpsize (rounded down), so the last, partial warp never writes its sum; right whenever n is a multiple of the warp size (a typical test with n = 1024 passes it), it must lose the points.
# naive: allclose
from numba import float32, uint64


@cuda.jit
def warp_sums_kernel(x, sums):
    i = cuda.grid(1)
    v = x[i] if i < x.size else float32(0)
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(mask, v, offset)
        offset //= 2
    warps = x.size // cuda.warpsize
    w = i // cuda.warpsize
    if i % cuda.warpsize == 0 and w < warps:
        sums[w] = v
