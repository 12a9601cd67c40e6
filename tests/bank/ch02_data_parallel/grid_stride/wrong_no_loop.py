# bank: one element per thread with no loop, so with a grid smaller than the data everything past the grid stays unwritten; it must lose the points.
# naive: none
@cuda.jit
def vector_add_grid_stride(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]
