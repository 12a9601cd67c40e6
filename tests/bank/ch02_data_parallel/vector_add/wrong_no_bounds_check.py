# bank: the kernel has no `if i < n` and the grid overshoots n, so spare threads index past the end; it must lose the points.
# naive: allclose
@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = 128
    vector_add_kernel[(out.size + threads - 1) // threads, threads](x, y, out)
