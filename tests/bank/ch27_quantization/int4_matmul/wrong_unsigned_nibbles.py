# bank: takes each nibble as it is (0 .. 15), without subtracting the offset of 8; every weight is 8·scale too large, and the verdict names the offset; it must lose the points.
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
    acc = cuda.local.array(16, float32)
    for row in range(warp, rows, warps):
        for b in range(batch):
            acc[b] = float32(0.0)
        for j in range(lane, nbytes, cuda.warpsize):
            v = int32(packed[row, j])
            c = 2 * j
            s = float32(scales[row, c // group])
            w0 = float32(v & 15) * s
            w1 = float32(v >> 4) * s
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
