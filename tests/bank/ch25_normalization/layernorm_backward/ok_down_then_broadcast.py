# bank: the two sums in two loops, each reduced with shfl_down_sync to lane 0 and broadcast to every lane with shfl_sync; a slower layout, correct, full marks.
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
        for i in range(lane, n, cuda.warpsize):
            a += gamma[i] * dy[row, i]
        b = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            b += gamma[i] * dy[row, i] * (x[row, i] - mu) * r
        offset = cuda.warpsize // 2
        while offset > 0:
            a += cuda.shfl_down_sync(mask, a, offset)
            b += cuda.shfl_down_sync(mask, b, offset)
            offset //= 2
        a = cuda.shfl_sync(mask, a, 0) / float32(n)
        b = cuda.shfl_sync(mask, b, 0) / float32(n)
        for i in range(lane, n, cuda.warpsize):
            xhat = (x[row, i] - mu) * r
            dx[row, i] = r * (gamma[i] * dy[row, i] - a - xhat * b)
