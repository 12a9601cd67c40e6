# bank: the reference grid-stride loop with cuda.grid(1) and cuda.gridsize(1); correct, full marks.
# naive: none
@cuda.jit
def vector_add_grid_stride(x, y, out):
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = x[i] + y[i]
