# bank: a warp per row, lanes striding by cuda.warpsize, the mask built from the warp size, every lane (past the last row too) in a shfl_down tree, lane 0 stores; correct at warp sizes 32 and 64, full marks.
# naive: none
from numba import float32, uint64


@cuda.jit
def spmv_csr_vector_kernel(row_ptr, col, val, x, y):
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    lane = cuda.threadIdx.x % cuda.warpsize
    i = cuda.grid(1) // cuda.warpsize
    acc = float32(0.0)
    if i < y.size:
        for k in range(row_ptr[i] + lane, row_ptr[i + 1], cuda.warpsize):
            acc += val[k] * x[col[k]]
    offset = cuda.warpsize // 2
    while offset > 0:
        acc += cuda.shfl_down_sync(mask, acc, offset)
        offset //= 2
    if lane == 0 and i < y.size:
        y[i] = acc
