# bank: a grid-stride loop over the nonzeros (any grid covers them), the indices read into locals first; correct, full marks.
# naive: none
@cuda.jit
def spmv_coo_kernel(row, col, val, x, y):
    for k in range(cuda.grid(1), row.shape[0], cuda.gridsize(1)):
        r = row[k]
        c = col[k]
        cuda.atomic.add(y, r, val[k] * x[c])
