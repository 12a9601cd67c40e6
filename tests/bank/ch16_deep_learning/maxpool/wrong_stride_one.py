# bank: windows that start at (i, j) instead of (i·K, j·K): overlapping windows with a stride of 1; it must lose the points.
# naive: none
@cuda.jit
def maxpool_kernel(Y, out, K):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    C = out.shape[1]
    n, c = cuda.blockIdx.z // C, cuda.blockIdx.z % C
    if i < out.shape[2] and j < out.shape[3]:
        best = Y[n, c, i, j]
        for a in range(K):
            for b in range(K):
                best = max(best, Y[n, c, i + a, j + b])
        out[n, c, i, j] = best
