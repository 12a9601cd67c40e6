# bank: reads the filter turned by 180° (W[m, c, R - 1 - r, S - 1 - s]: a true convolution, not the layer's correlation); it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def conv_forward_kernel(X, W, Y):
    q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, C, R, S = W.shape
    n, m = cuda.blockIdx.z // M, cuda.blockIdx.z % M
    if p < Y.shape[2] and q < Y.shape[3]:
        acc = float32(0.0)
        for c in range(C):
            for r in range(R):
                for s in range(S):
                    acc += X[n, c, p + r, q + s] * W[m, c, R - 1 - r, S - 1 - s]
        Y[n, m, p, q] = acc
