# bank: the launcher computes into a new device array and returns it instead of writing into `out`, so `out` is never written; it must lose the points.
# naive: none
@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    result = cuda.device_array(x.size, dtype=np.float32)
    threads = 256
    vector_add_kernel[(x.size + threads - 1) // threads, threads](x, y, result)
    return result
