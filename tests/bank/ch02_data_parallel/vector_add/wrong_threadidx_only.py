# bank: the kernel indexes with threadIdx.x alone (ignores blockIdx), which is right only while n <= 256 (one block); it must lose the points.
# naive: allclose
@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.threadIdx.x
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = 256
    vector_add_kernel[(out.size + threads - 1) // threads, threads](x, y, out)
