# bank: one pass with σ² = E[x²] − E[x]² (clamped at 0): right on centred data, but the rows with a large offset lose the whole variance to cancellation; a hand-written test on values in [0, 1) passes it; it must lose the points.
# naive: allclose
import math

from numba import float32, uint64

@cuda.jit
def layernorm_kernel(x, gamma, beta, eps, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, n = x.shape
    for row in range(warp, rows, warps):
        s = float32(0.0)
        s2 = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            s += x[row, i]
            s2 += x[row, i] * x[row, i]
        offset = cuda.warpsize // 2
        while offset > 0:
            s += cuda.shfl_xor_sync(mask, s, offset)
            s2 += cuda.shfl_xor_sync(mask, s2, offset)
            offset //= 2
        mean = s / float32(n)
        var = max(s2 / float32(n) - mean * mean, float32(0.0))
        rstd = float32(1.0) / math.sqrt(var + eps)
        for i in range(lane, n, cuda.warpsize):
            y[row, i] = (x[row, i] - mean) * rstd * gamma[i] + beta[i]
