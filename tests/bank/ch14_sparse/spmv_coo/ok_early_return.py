# bank: returns early past the last nonzero, and skips the atomic when the product is exactly zero (no change to y); correct, full marks.
# naive: none
@cuda.jit
def spmv_coo_kernel(row, col, val, x, y):
    k = cuda.grid(1)
    if k >= val.size:
        return
    product = val[k] * x[col[k]]
    if product != 0:
        cuda.atomic.add(y, row[k], product)
