# bank: the up-sweep runs while stride < T instead of stride < 2T, so its last step (the root, xy[2T - 1] += xy[T - 1]) is skipped and the last element of every full section lacks the first half's sum; it must lose the points.
# naive: none
from numba import float32

BK_SECTION = 512


@cuda.jit
def brent_kung_kernel(x, y):
    xy = cuda.shared.array(BK_SECTION, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = cuda.blockIdx.x * 2 * T
    for k in range(t, 2 * T, T):
        xy[k] = x[start + k] if start + k < x.size else float32(0)
    stride = 1
    while stride < T:
        cuda.syncthreads()
        j = (t + 1) * 2 * stride - 1
        if j < 2 * T:
            xy[j] += xy[j - stride]
        stride *= 2
    stride = T // 2
    while stride > 0:
        cuda.syncthreads()
        j = (t + 1) * 2 * stride - 1
        if j + stride < 2 * T:
            xy[j + stride] += xy[j]
        stride //= 2
    cuda.syncthreads()
    for k in range(t, 2 * T, T):
        if start + k < x.size:
            y[start + k] = xy[k]
