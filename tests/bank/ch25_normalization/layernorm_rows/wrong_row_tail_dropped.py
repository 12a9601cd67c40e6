# bank: stops each lane's loops at the last whole multiple of the warp size, so the row's tail (n mod warpsize elements) is neither counted nor written; it must lose the points.
# naive: none
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
        count = float32(0.0)
        mean = float32(0.0)
        m2 = float32(0.0)
        for i in range(lane, n - n % cuda.warpsize, cuda.warpsize):
            v = x[row, i]
            count += float32(1.0)
            d = v - mean
            mean += d / count
            m2 += d * (v - mean)
        offset = cuda.warpsize // 2
        while offset > 0:
            count_b = cuda.shfl_xor_sync(mask, count, offset)
            mean_b = cuda.shfl_xor_sync(mask, mean, offset)
            m2_b = cuda.shfl_xor_sync(mask, m2, offset)
            total = count + count_b
            if total > float32(0.0):
                d = mean_b - mean
                mean += d * (count_b / total)
                m2 += m2_b + d * d * (count * count_b / total)
                count = total
            offset //= 2
        rstd = float32(1.0) / math.sqrt(m2 / float32(n) + eps)
        for i in range(lane, n - n % cuda.warpsize, cuda.warpsize):
            y[row, i] = (x[row, i] - mean) * rstd * gamma[i] + beta[i]
