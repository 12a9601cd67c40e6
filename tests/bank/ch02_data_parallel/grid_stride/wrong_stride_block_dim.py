# bank: a grid-stride loop that steps by cuda.blockDim.x instead of the grid's size: the threads of every block walk the whole array, so each element is computed by several threads (same value, wasted work, and a race in any kernel that accumulates); in CPU mode an element written by two threads fails this elementwise exercise.
# naive: allclose
@cuda.jit
def vector_add_grid_stride(x, y, out):
    start = cuda.grid(1)
    stride = cuda.blockDim.x
    for i in range(start, out.size, stride):
        out[i] = x[i] + y[i]
