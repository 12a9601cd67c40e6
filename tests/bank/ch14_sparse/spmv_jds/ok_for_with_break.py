# bank: a for loop over every section with a break at the first one that does not reach the row, explicit ids and a float64 accumulator; correct, full marks.
# naive: none
@cuda.jit
def spmv_jds_kernel(perm, t_ptr, col, val, x, y):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= y.size:
        return
    acc = 0.0
    for t in range(t_ptr.size - 1):
        k = t_ptr[t] + i
        if k >= t_ptr[t + 1]:
            break
        acc += val[k] * x[col[k]]
    y[perm[i]] = acc
