# bank: the same sum organised by the outputs the element fed: p from max(0, h − R + 1) to min(h, P − 1) (likewise q), with the tap h − p, w − q, and a float64 accumulator; no test inside the loops; correct, full marks.
# naive: none
@cuda.jit
def conv_backward_input_kernel(dY, W, dX):
    w = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    h = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, C, R, S = W.shape
    n, c = cuda.blockIdx.z // C, cuda.blockIdx.z % C
    if h < dX.shape[2] and w < dX.shape[3]:
        acc = 0.0
        for p in range(max(0, h - R + 1), min(h, dY.shape[2] - 1) + 1):
            for q in range(max(0, w - S + 1), min(w, dY.shape[3] - 1) + 1):
                for m in range(M):
                    acc += dY[n, m, p, q] * W[m, c, h - p, w - q]
        dX[n, c, h, w] = acc
