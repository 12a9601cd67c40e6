# bank: one warp per row, each column's weight dequantised as float32(q) · float32(scale) with the column's group followed by a running boundary (no division per column), times x, a tree of shfl_down_sync to lane 0, which writes: another correct order, full marks.
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
        g = 0
        boundary = group                    # the first column of group g + 1
        for c in range(lane, k, cuda.warpsize):
            while c >= boundary:
                g += 1
                boundary += group
            w = float32(q[row, c]) * float32(scales[row, g])
            acc += w * float32(x[c])
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(mask, acc, offset)
            offset //= 2
        if lane == 0:
            y[row] = acc
