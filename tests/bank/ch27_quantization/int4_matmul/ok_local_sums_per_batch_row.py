# bank: one warp per row, a loop over the groups (the scale read once per group), a lane per byte of the group (strided by the warp), the byte converted to int32 and split into (v & 15) − 8 and (v >> 4) − 8, times the group's scale, one float32 sum per activation row in a local array, a butterfly per row of the batch: correct, full marks.
# naive: none
from numba import float32, int32, uint64


@cuda.jit
def int4_matmul_kernel(packed, scales, x, group, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, nbytes = packed.shape
    batch, k = x.shape
    half = group // 2
    acc = cuda.local.array(16, float32)
    for row in range(warp, rows, warps):
        for b in range(batch):
            acc[b] = float32(0.0)
        for g in range(scales.shape[1]):
            s = float32(scales[row, g])
            for j in range(g * half + lane, min(g * half + half, nbytes), cuda.warpsize):
                v = int32(packed[row, j])
                w0 = float32((v & 15) - 8) * s
                w1 = float32((v >> 4) - 8) * s
                c = 2 * j
                for b in range(batch):
                    t = w0 * float32(x[b, c])
                    if c + 1 < k:
                        t += w1 * float32(x[b, c + 1])
                    acc[b] += t
        for b in range(batch):
            total = acc[b]
            offset = cuda.warpsize // 2
            while offset > 0:
                total += cuda.shfl_xor_sync(mask, total, offset)
                offset //= 2
            if lane == 0:
                y[b, row] = total
