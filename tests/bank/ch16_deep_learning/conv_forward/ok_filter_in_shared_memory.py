# bank: every block works for one (n, m), so it copies the filter W[m] into shared memory (each thread a few values), waits at a barrier every thread reaches, then sums from there with a float64 accumulator and a flat (c, r, s) index; correct, full marks.
# naive: none
from numba import float32

FILTER_MAX = 1024


@cuda.jit
def conv_forward_kernel(X, W, Y):
    w_s = cuda.shared.array(FILTER_MAX, float32)
    M, C, R, S = W.shape
    n, m = cuda.blockIdx.z // M, cuda.blockIdx.z % M
    t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    for k in range(t, C * R * S, cuda.blockDim.x * cuda.blockDim.y):
        w_s[k] = W[m, k // (R * S), (k // S) % R, k % S]
    cuda.syncthreads()
    q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if p < Y.shape[2] and q < Y.shape[3]:
        acc = 0.0
        for k in range(C * R * S):
            acc += X[n, k // (R * S), p + (k // S) % R, q + k % S] * w_s[k]
        Y[n, m, p, q] = acc
