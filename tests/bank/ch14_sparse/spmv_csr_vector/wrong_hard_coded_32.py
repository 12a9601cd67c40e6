# bank: written for warps of 32 throughout (row and lane with // 32 and % 32, a stride of 32, offsets from 16, mask 0xffffffff): right on NVIDIA, wrong on a 64-lane wavefront, which the hidden tests run; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_vector_kernel(row_ptr, col, val, x, y):
    lane = cuda.threadIdx.x % 32
    i = cuda.grid(1) // 32
    acc = float32(0.0)
    if i < y.size:
        for k in range(row_ptr[i] + lane, row_ptr[i + 1], 32):
            acc += val[k] * x[col[k]]
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    if lane == 0 and i < y.size:
        y[i] = acc
