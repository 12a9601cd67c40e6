# bank: leaves out the x̂·mean(γ·dy·x̂) term (the path through the variance); it must lose the points.
# naive: none
import math

from numba import float32, uint64

@cuda.jit
def layernorm_backward_kernel(dy, x, gamma, mean, rstd, dx):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, n = x.shape
    for row in range(warp, rows, warps):
        mu = mean[row]
        r = rstd[row]
        a = float32(0.0)
        b = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            g = gamma[i] * dy[row, i]
            a += g
            b += g * ((x[row, i] - mu) * r)
        offset = cuda.warpsize // 2
        while offset > 0:
            a += cuda.shfl_xor_sync(mask, a, offset)
            b += cuda.shfl_xor_sync(mask, b, offset)
            offset //= 2
        a /= float32(n)
        b /= float32(n)
        for i in range(lane, n, cuda.warpsize):
            dx[row, i] = r * (gamma[i] * dy[row, i] - a)
