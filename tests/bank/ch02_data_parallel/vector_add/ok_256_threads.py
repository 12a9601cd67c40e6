# bank: the standard kernel with a guard and a launcher with 256 threads and ceil(n / 256) blocks; correct, full marks.
# naive: none
@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    threads = 256
    blocks = (out.size + threads - 1) // threads
    vector_add_kernel[blocks, threads](x, y, out)
