# bank: copies the filter into shared memory but reads it with no cuda.syncthreads() between the copies and the reads, so a thread can read a value another warp has not stored yet (a race the simulator often gets right by luck); it must lose the points.
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
    q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if p < Y.shape[2] and q < Y.shape[3]:
        acc = float32(0.0)
        for k in range(C * R * S):
            acc += X[n, k // (R * S), p + (k // S) % R, q + k % S] * w_s[k]
        Y[n, m, p, q] = acc
