# bank: two warp reductions instead of a pair: the maximum by shfl_down_sync then broadcast from lane 0 with shfl_sync, then the sum of exp(x − m) the same way; the row read three times, the lanes past a short row taking part with −inf and 0; correct, full marks.
# naive: none
import math
from numba import float32, uint64


@cuda.jit
def softmax_warp_kernel(x, y):
    W = cuda.warpsize
    mask = ~uint64(0) >> (64 - W)
    lane = cuda.threadIdx.x % W
    first = cuda.grid(1) // W
    step = cuda.gridsize(1) // W
    n = x.shape[1]
    r = first
    while r < x.shape[0]:
        m = float32(-math.inf)
        for j in range(lane, n, W):
            m = max(m, x[r, j])
        k = W // 2
        while k > 0:
            m = max(m, cuda.shfl_down_sync(mask, m, k))
            k //= 2
        m = cuda.shfl_sync(mask, m, 0)
        s = float32(0.0)
        if m > float32(-math.inf):
            for j in range(lane, n, W):
                s += math.exp(x[r, j] - m)
        k = W // 2
        while k > 0:
            s += cuda.shfl_down_sync(mask, s, k)
            k //= 2
        s = cuda.shfl_sync(mask, s, 0)
        for j in range(lane, n, W):
            if s > float32(0.0):
                y[r, j] = math.exp(x[r, j] - m) / s
            else:
                y[r, j] = float32(0.0)
        r += step
