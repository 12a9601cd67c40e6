# bank: adds with a plain += into y[row[k]]: the nonzeros of one row are different threads, and a read-modify-write race loses additions on a GPU; the simulator rarely shows it, the race detector stops it every time; it must lose the points.
# naive: none
@cuda.jit
def spmv_coo_kernel(row, col, val, x, y):
    k = cuda.grid(1)
    if k < val.size:
        y[row[k]] += val[k] * x[col[k]]
