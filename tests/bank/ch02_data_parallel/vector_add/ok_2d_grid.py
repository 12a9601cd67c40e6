# bank: a 2-D grid of 32 x 4-thread blocks whose linear index is rebuilt from x and y (blocks numbered row by row), with a guard; an unusual but correct layout, so full marks.
# naive: none
@cuda.jit
def add_2d(x, y, out):
    threads_per_block = cuda.blockDim.x * cuda.blockDim.y
    block = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    i = block * threads_per_block + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = (32, 4)
    per_block = threads[0] * threads[1]
    blocks_needed = (out.size + per_block - 1) // per_block
    grid_x = min(blocks_needed, 16)
    grid_y = (blocks_needed + grid_x - 1) // grid_x
    add_2d[(grid_x, grid_y), threads](x, y, out)
