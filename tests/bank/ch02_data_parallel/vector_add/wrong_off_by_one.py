# bank: the guard is `i <= n`, so thread n reads and writes one element past the end; it must lose the points.
# naive: allclose
@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.grid(1)
    if i <= out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = 256
    vector_add_kernel[(out.size + threads - 1) // threads, threads](x, y, out)
