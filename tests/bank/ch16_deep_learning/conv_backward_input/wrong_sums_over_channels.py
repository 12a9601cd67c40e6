# bank: sums over the channels (dY[n, c, …] · W[c, m, …], the forward pass's roles) instead of over the filters, kept inside the arrays with modulo; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def conv_backward_input_kernel(dY, W, dX):
    w = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    h = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, C, R, S = W.shape
    n, c = cuda.blockIdx.z // C, cuda.blockIdx.z % C
    if h < dX.shape[2] and w < dX.shape[3]:
        acc = float32(0.0)
        for k in range(C):
            for r in range(R):
                for s in range(S):
                    p, q = h - r, w - s
                    if 0 <= p < dY.shape[2] and 0 <= q < dY.shape[3]:
                        acc += dY[n, k % M, p, q] * W[c % M, k, r, s]
        dX[n, c, h, w] = acc
