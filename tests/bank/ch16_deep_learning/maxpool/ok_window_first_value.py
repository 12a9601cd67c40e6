# bank: one thread per output, the running maximum started from the window's first value, max() over the K × K window; correct, full marks.
# naive: none
@cuda.jit
def maxpool_kernel(Y, out, K):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    C = out.shape[1]
    n, c = cuda.blockIdx.z // C, cuda.blockIdx.z % C
    if i < out.shape[2] and j < out.shape[3]:
        best = Y[n, c, i * K, j * K]
        for a in range(K):
            for b in range(K):
                best = max(best, Y[n, c, i * K + a, j * K + b])
        out[n, c, i, j] = best
