# bank: Brent-Kung in GPU Gems' style: each step counts its active threads (d = T, T/2, ..., 1 up, then 1, 3, 7, ... down) and indexes with offsets, ai = offset·(2t + 1) - 1 and bi = ai + offset, the two loads written out by hand; correct, full marks.
# naive: none
from numba import float32

MAX_SECTION = 512


@cuda.jit
def brent_kung_kernel(x, y):
    xy = cuda.shared.array(MAX_SECTION, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    base = 2 * T * cuda.blockIdx.x
    xy[t] = x[base + t] if base + t < x.size else float32(0)
    xy[t + T] = x[base + t + T] if base + t + T < x.size else float32(0)
    offset = 1
    d = T
    while d > 0:                        # up-sweep: d threads add pairs `offset` apart
        cuda.syncthreads()
        if t < d:
            ai = offset * (2 * t + 1) - 1
            bi = ai + offset
            xy[bi] += xy[ai]
        offset *= 2
        d //= 2
    offset = T // 2
    d = 1
    while offset > 0:                   # down-sweep, inclusive: 1, 3, 7, ... threads
        cuda.syncthreads()
        if t < d:
            ai = offset * (2 * t + 2) - 1
            xy[ai + offset] += xy[ai]
        offset //= 2
        d = 2 * d + 1
    cuda.syncthreads()
    if base + t < y.size:
        y[base + t] = xy[t]
    if base + t + T < y.size:
        y[base + t + T] = xy[t + T]
