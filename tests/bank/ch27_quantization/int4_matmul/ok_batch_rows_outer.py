# bank: one warp per row, the batch rows in the outer loop (each byte read again from the cache for every activation row), the nibbles unpacked per column (c // 2 selects the byte, c % 2 the half), q·x summed per group and scaled once, down-shuffles to lane 0: correct, full marks.
# naive: none
from numba import float32, int32, uint64


@cuda.jit
def int4_matmul_kernel(packed, scales, x, group, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows = packed.shape[0]
    batch, k = x.shape
    for row in range(warp, rows, warps):
        for b in range(batch):
            acc = float32(0.0)
            for g in range(scales.shape[1]):
                part = float32(0.0)
                for c in range(g * group + lane, min(g * group + group, k), cuda.warpsize):
                    v = int32(packed[row, c // 2])
                    if c % 2 == 0:
                        qv = (v & 15) - 8
                    else:
                        qv = (v >> 4) - 8
                    part += float32(qv) * float32(x[b, c])
                acc += part * float32(scales[row, g])
            offset = cuda.warpsize // 2
            while offset > 0:
                acc += cuda.shfl_down_sync(mask, acc, offset)
                offset //= 2
            if lane == 0:
                y[b, row] = acc
