# bank: takes the scale of column c as scales[row, c // 32], as if every group had 32 columns: right only where group = 32; the checks draw other group sizes and scales that differ by group, so it must lose the points.
# naive: allclose
from numba import float32, uint64


@cuda.jit
def int8_matvec_kernel(q, scales, x, group, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, k = q.shape
    for row in range(warp, rows, warps):
        acc = float32(0.0)
        for c in range(lane, k, cuda.warpsize):
            g = min(c // 32, scales.shape[1] - 1)
            acc += float32(q[row, c]) * float32(scales[row, g]) * float32(x[c])
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_xor_sync(mask, acc, offset)
            offset //= 2
        if lane == 0:
            y[row] = acc
