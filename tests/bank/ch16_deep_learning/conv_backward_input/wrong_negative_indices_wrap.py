# bank: tests h − r and w − s only against dY's sizes, not against 0, so near the top and left borders a negative index wraps around to dY's last rows and columns (no error in Numba); it must lose the points.
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
        for m in range(M):
            for r in range(R):
                for s in range(S):
                    if h - r < dY.shape[2] and w - s < dY.shape[3]:
                        acc += dY[n, m, h - r, w - s] * W[m, c, r, s]
        dX[n, c, h, w] = acc
