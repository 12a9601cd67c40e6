# bank: the lanes read the row in whole rounds of cuda.warpsize nonzeros only (rounds = length // warpsize), so the last, partial round is never read: rows shorter than a warp come out 0 and longer ones lose their tail; it must lose the points.
# naive: none
from numba import float32, uint64


@cuda.jit
def spmv_csr_vector_kernel(row_ptr, col, val, x, y):
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    lane = cuda.threadIdx.x % cuda.warpsize
    i = cuda.grid(1) // cuda.warpsize
    acc = float32(0.0)
    if i < y.size:
        start = row_ptr[i]
        rounds = (row_ptr[i + 1] - start) // cuda.warpsize
        for r in range(rounds):
            k = start + r * cuda.warpsize + lane
            acc += val[k] * x[col[k]]
    offset = cuda.warpsize // 2
    while offset > 0:
        acc += cuda.shfl_down_sync(mask, acc, offset)
        offset //= 2
    if lane == 0 and i < y.size:
        y[i] = acc
