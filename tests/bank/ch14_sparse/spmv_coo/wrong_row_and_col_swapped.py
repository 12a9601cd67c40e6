# bank: swaps row and column (adds val[k] * x[row[k]] into y[col[k]]): the product of the transpose, with indices past the end of y since the matrices are not square; it must lose the points.
# naive: none
@cuda.jit
def spmv_coo_kernel(row, col, val, x, y):
    k = cuda.grid(1)
    if k < val.size:
        cuda.atomic.add(y, col[k], val[k] * x[row[k]])
