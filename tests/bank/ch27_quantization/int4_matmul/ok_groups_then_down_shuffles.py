# bank: one warp per row, a loop over the row's groups with the scale read once per group, the lane's bytes of the group unpacked once each and used for every activation row (q·x summed per group in a local array, then scaled), shfl_down_sync to lane 0 for each activation row: correct, full marks.
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
    part = cuda.local.array(16, float32)
    for row in range(warp, rows, warps):
        for b in range(batch):
            acc[b] = float32(0.0)
        for g in range(scales.shape[1]):
            for b in range(batch):
                part[b] = float32(0.0)
            for j in range(g * half + lane, min(g * half + half, nbytes), cuda.warpsize):
                v = int32(packed[row, j])
                q0 = float32((v & 15) - 8)
                q1 = float32((v >> 4) - 8)
                c = 2 * j
                for b in range(batch):
                    t = q0 * float32(x[b, c])
                    if c + 1 < k:
                        t += q1 * float32(x[b, c + 1])
                    part[b] += t
            s = float32(scales[row, g])
            for b in range(batch):
                acc[b] += part[b] * s
        for b in range(batch):
            total = acc[b]
            offset = cuda.warpsize // 2
            while offset > 0:
                total += cuda.shfl_down_sync(mask, total, offset)
                offset //= 2
            if lane == 0:
                y[b, row] = total
