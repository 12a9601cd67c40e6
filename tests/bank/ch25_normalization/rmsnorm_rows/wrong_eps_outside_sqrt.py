# bank: puts ε outside the square root: wrong on the rows whose scale is near sqrt(ε); it must lose the points.
# naive: none
import math

from numba import float32, uint64

@cuda.jit
def rmsnorm_kernel(x, gamma, eps, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, n = x.shape
    for row in range(warp, rows, warps):
        s2 = float32(0.0)
        for i in range(lane, n, cuda.warpsize):
            s2 += x[row, i] * x[row, i]
        offset = cuda.warpsize // 2
        while offset > 0:
            s2 += cuda.shfl_xor_sync(mask, s2, offset)
            offset //= 2
        r = float32(1.0) / (math.sqrt(s2 / float32(n)) + eps)
        for i in range(lane, n, cuda.warpsize):
            y[row, i] = x[row, i] * r * gamma[i]
