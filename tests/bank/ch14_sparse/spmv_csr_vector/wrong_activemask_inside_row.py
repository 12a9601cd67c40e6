# bank: the lanes of a row take their shuffle mask from cuda.activemask() inside `if i < y.size:`; a GPU that keeps the warp converged hands it every lane and the sums come out right, but activemask() names only the lanes running together at that instant (CPU mode splits them there on purpose), so the tree may add a partial warp; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def spmv_csr_vector_kernel(row_ptr, col, val, x, y):
    lane = cuda.threadIdx.x % cuda.warpsize
    i = cuda.grid(1) // cuda.warpsize
    if i < y.size:
        acc = float32(0.0)
        for k in range(row_ptr[i] + lane, row_ptr[i + 1], cuda.warpsize):
            acc += val[k] * x[col[k]]
        mask = cuda.activemask()
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(mask, acc, offset)
            offset //= 2
        if lane == 0:
            y[i] = acc
