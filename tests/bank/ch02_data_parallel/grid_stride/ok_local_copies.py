# bank: the loop reads both inputs into locals before the store, with len() for the size; correct, full marks.
# naive: none
@cuda.jit
def vector_add_grid_stride(x, y, out):
    n = len(out)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        xi = x[i]
        yi = y[i]
        out[i] = xi + yi
