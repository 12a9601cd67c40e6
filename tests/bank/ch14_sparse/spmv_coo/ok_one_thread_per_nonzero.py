# bank: one thread per nonzero with explicit block and thread ids, a guard on the nonzero count, and cuda.atomic.add of the product into y at the nonzero's row; correct, full marks.
# naive: none
@cuda.jit
def spmv_coo_kernel(row, col, val, x, y):
    k = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if k < val.size:
        cuda.atomic.add(y, row[k], val[k] * x[col[k]])
