# bank: the global index is threadIdx.x * blockDim.x + blockIdx.x (block and thread ids swapped), so most elements are never written; it must lose the points.
# naive: none
@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.threadIdx.x * cuda.blockDim.x + cuda.blockIdx.x
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = 128
    vector_add_kernel[(out.size + threads - 1) // threads, threads](x, y, out)
