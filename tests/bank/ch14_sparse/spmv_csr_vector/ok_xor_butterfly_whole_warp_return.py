# bank: explicit ids, a whole warp past the last row returns at once (its lanes all leave together, so no shuffle misses a partner), a while loop over the row, an xor butterfly that leaves every lane with the sum, lane 0 stores; correct at warp sizes 32 and 64, full marks.
# naive: none
from numba import float32, uint64


@cuda.jit
def spmv_csr_vector_kernel(row_ptr, col, val, x, y):
    t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    w = cuda.warpsize
    row = t // w
    if row >= y.size:
        return
    lane = t - row * w
    k = row_ptr[row] + lane
    end = row_ptr[row + 1]
    s = float32(0.0)
    while k < end:
        s += val[k] * x[col[k]]
        k += w
    everyone = ~uint64(0) >> (64 - w)
    step = 1
    while step < w:
        s += cuda.shfl_xor_sync(everyone, s, step)
        step *= 2
    if lane == 0:
        y[row] = s
