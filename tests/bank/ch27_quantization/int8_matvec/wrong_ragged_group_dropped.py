# bank: loops over k // group whole groups, so the shorter last group of a row whose K is not a multiple of the group size is never added; it must lose the points.
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
        for g in range(k // group):
            part = float32(0.0)
            for c in range(g * group + lane, g * group + group, cuda.warpsize):
                part += float32(q[row, c]) * float32(x[c])
            acc += part * float32(scales[row, g])
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_xor_sync(mask, acc, offset)
            offset //= 2
        if lane == 0:
            y[row] = acc
