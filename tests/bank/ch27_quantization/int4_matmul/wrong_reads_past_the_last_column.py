# bank: always adds the high nibble's product, even for the last byte of an odd K, whose high nibble is padding: it reads x[b, K], past the end of its row (the next row's first value, or past the array); it must lose the points.
# naive: allclose
from numba import float32, int32, uint64


@cuda.jit
def int4_matmul_kernel(packed, scales, x, group, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // cuda.warpsize
    warps = (cuda.gridDim.x * cuda.blockDim.x) // cuda.warpsize
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    rows, nbytes = packed.shape
    batch, k = x.shape
    acc = cuda.local.array(16, float32)
    for row in range(warp, rows, warps):
        for b in range(batch):
            acc[b] = float32(0.0)
        for j in range(lane, nbytes, cuda.warpsize):
            v = int32(packed[row, j])
            c = 2 * j
            s = float32(scales[row, c // group])
            w0 = float32((v & 15) - 8) * s
            w1 = float32((v >> 4) - 8) * s
            for b in range(batch):
                acc[b] += w0 * float32(x[b, c]) + w1 * float32(x[b, c + 1])
        for b in range(batch):
            total = acc[b]
            offset = cuda.warpsize // 2
            while offset > 0:
                total += cuda.shfl_xor_sync(mask, total, offset)
                offset //= 2
            if lane == 0:
                y[b, row] = total
