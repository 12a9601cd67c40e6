# bank: starts the maximum at minus infinity (math.inf), compares with an if, and returns early past the output; correct, full marks.
# naive: none
import math


@cuda.jit
def maxpool_kernel(Y, out, K):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i >= out.shape[2] or j >= out.shape[3]:
        return
    n = cuda.blockIdx.z // out.shape[1]
    c = cuda.blockIdx.z - n * out.shape[1]
    best = -math.inf
    for a in range(K):
        for b in range(K):
            v = Y[n, c, i * K + a, j * K + b]
            if v > best:
                best = v
    out[n, c, i, j] = best
