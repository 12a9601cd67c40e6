# bank: the grid-stride loop runs to out.size - 1, so the last element is never written; it must lose the points.
# naive: none
@cuda.jit
def vector_add_grid_stride(x, y, out):
    for i in range(cuda.grid(1), out.size - 1, cuda.gridsize(1)):
        out[i] = x[i] + y[i]
