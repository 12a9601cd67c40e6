# bank: one warp per row, a loop over the row's groups with the scale read once per group, Σ q·x over the lane's columns of the group in float32, times the scale, a butterfly of xor shuffles: correct at any warp size, full marks.
# naive: none
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
        for g in range(scales.shape[1]):
            start = g * group
            end = min(start + group, k)
            part = float32(0.0)
            for c in range(start + lane, end, cuda.warpsize):
                part += float32(q[row, c]) * float32(x[c])
            acc += part * float32(scales[row, g])
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_xor_sync(mask, acc, offset)
            offset //= 2
        if lane == 0:
            y[row] = acc
