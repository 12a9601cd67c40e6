# bank: the shuffles' mask is the literal 0xffffffff (everything else reads cuda.warpsize): right at warp size 32, but at 64 it names only lanes 0-31 while lanes 32-63 call the shuffle too, a partial mask that CUDA leaves undefined; the hidden tests at warp size 64 stop it, so it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_vector_kernel(row_ptr, col, val, x, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    i = cuda.grid(1) // cuda.warpsize
    acc = float32(0.0)
    if i < y.size:
        for k in range(row_ptr[i] + lane, row_ptr[i + 1], cuda.warpsize):
            acc += val[k] * x[col[k]]
    offset = cuda.warpsize // 2
    while offset > 0:
        acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    if lane == 0 and i < y.size:
        y[i] = acc
