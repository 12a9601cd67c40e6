# bank: a grid-stride kernel launched with a fixed grid of at most 8 blocks, which covers any n; correct, full marks.
# naive: none
@cuda.jit
def vector_add_kernel(x, y, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = 64
    blocks = min(8, (out.size + threads - 1) // threads)
    vector_add_kernel[blocks, threads](x, y, out)
