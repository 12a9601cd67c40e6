# bank: explicit ids, the row count from row_ptr, a while loop and a float64 accumulator (more accurate than float32, stored as float32); correct, full marks.
# naive: none
@cuda.jit
def spmv_csr_kernel(row_ptr, col, val, x, y):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < row_ptr.size - 1:
        k = row_ptr[i]
        end = row_ptr[i + 1]
        acc = 0.0
        while k < end:
            acc += val[k] * x[col[k]]
            k += 1
        y[i] = acc
