# bank: dequantises and sums in float16 (cuda.fp16.hmul and hadd, rounding to 11 bits after every operation), converting to float32 only for the shuffles: off by many times the float32 bound; it must lose the points.
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
        acc = x[0] - x[0]
        for c in range(lane, k, cuda.warpsize):
            sx = cuda.fp16.hmul(scales[row, c // group], x[c])
            acc = cuda.fp16.hadd(acc, cuda.fp16.hmul(sx, x[0] - x[0] + q[row, c]))
        total = float32(acc)
        offset = cuda.warpsize // 2
        while offset > 0:
            total += cuda.shfl_xor_sync(mask, total, offset)
            offset //= 2
        if lane == 0:
            y[row] = total
