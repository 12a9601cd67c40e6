# bank: no `if k < val.size`: the threads of the last block past the last nonzero read outside row, col and val (on a GPU they add garbage into y); it must lose the points.
# naive: none
@cuda.jit
def spmv_coo_kernel(row, col, val, x, y):
    k = cuda.grid(1)
    cuda.atomic.add(y, row[k], val[k] * x[col[k]])
