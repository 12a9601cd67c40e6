# bank: the ELL thread goes over every slot and skips padding by its column −1, then stores its sum when the row has a free slot (so no COO nonzero: no other thread touches y[t]) and adds it atomically otherwise; the COO part first in the thread numbering (explicit ids); correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def spmv_hybrid_kernel(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y):
    t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    rows = y.size
    nnz = coo_val.size
    if t < nnz:
        cuda.atomic.add(y, coo_row[t], coo_val[t] * x[coo_col[t]])
    elif t - nnz < rows:
        i = t - nnz
        width = ell_col.size // rows
        acc = float32(0.0)
        for s in range(width):
            c = ell_col[s * rows + i]
            if c >= 0:
                acc += ell_val[s * rows + i] * x[c]
        if ell_len[i] < width:
            y[i] = acc
        else:
            cuda.atomic.add(y, i, acc)
