# bank: blocks = n // threads rounds down, so the last partial block's elements are never written (and n < threads launches nothing); it must lose the points.
# naive: allclose
@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = 128
    vector_add_kernel[max(out.size // threads, 1), threads](x, y, out)
