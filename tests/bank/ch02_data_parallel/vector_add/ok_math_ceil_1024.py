# bank: 1024 threads per block with math.ceil for the block count and cuda.grid(1); correct, full marks.
# naive: none
import math


@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    n = out.shape[0]
    threads_per_block = 1024
    blocks_per_grid = math.ceil(n / threads_per_block)
    vector_add_kernel[blocks_per_grid, threads_per_block](x, y, out)
