# bank: the butterfly starts at offset W/4, so the two halves of the warp never merge their pairs: each half normalises by its own sum; it must lose the points.
# naive: none
import math
from numba import float32, uint64


@cuda.jit
def softmax_warp_kernel(x, y):
    W = cuda.warpsize
    mask = ~uint64(0) >> (64 - W)
    lane = cuda.threadIdx.x % W
    warp = cuda.grid(1) // W
    warps = cuda.gridsize(1) // W
    n = x.shape[1]
    for r in range(warp, x.shape[0], warps):
        m = float32(-math.inf)
        d = float32(0.0)
        for j in range(lane, n, W):
            v = x[r, j]
            if v > m:
                d = d * math.exp(m - v) + float32(1.0)
                m = v
            elif v > float32(-math.inf):
                d += math.exp(v - m)
        offset = W // 4
        while offset > 0:
            m2 = cuda.shfl_xor_sync(mask, m, offset)
            d2 = cuda.shfl_xor_sync(mask, d, offset)
            big = max(m, m2)
            if big > float32(-math.inf):
                d = d * math.exp(m - big) + d2 * math.exp(m2 - big)
                m = big
            offset //= 2
        for j in range(lane, n, W):
            y[r, j] = math.exp(x[r, j] - m) / d if d > float32(0.0) else float32(0.0)
