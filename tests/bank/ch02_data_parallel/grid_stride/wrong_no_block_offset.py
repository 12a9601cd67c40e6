# bank: the loop starts at threadIdx.x in every block (no blockIdx offset) but strides by the grid size, so blocks redo each other's elements and leave gaps; it must lose the points.
# naive: none
@cuda.jit
def vector_add_grid_stride(x, y, out):
    for i in range(cuda.threadIdx.x, out.size, cuda.gridsize(1)):
        out[i] = x[i] + y[i]
