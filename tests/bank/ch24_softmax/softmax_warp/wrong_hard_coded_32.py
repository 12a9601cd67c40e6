# bank: a lane and warp index built with % 32 and // 32, a mask of 0xffffffff and offsets from 16: right on warps of 32 lanes, wrong at warp size 64 (the hidden cases in CPU mode, an AMD wavefront); it must lose the points.
# naive: allclose
import math
from numba import float32, uint64


@cuda.jit
def softmax_warp_kernel(x, y):
    W = 32
    mask = 0xffffffff
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
        offset = W // 2
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
