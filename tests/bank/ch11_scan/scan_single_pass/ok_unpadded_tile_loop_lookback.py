# bank: a single-pass scan in another style: an unpadded tile (bank conflicts, still right), the thread totals scanned in place by Kogge-Stone (read, barrier, write, barrier), thread 0's look-back a `while j >= 0` loop that every tile, tile 0 included, goes through, the status set with atomic.max (0 -> 1 -> 2 only grows) and read with atomic.or_, the values read with atomic.max(-inf) after a fence; correct, full marks.
# naive: none
from numba import float32, int32

MAX_THREADS = 256
COARSEN = 16
TILE = COARSEN * MAX_THREADS


@cuda.jit
def scan_single_pass_kernel(x, y, status, aggregates, prefixes, counter):
    tile = cuda.shared.array(TILE, float32)
    totals = cuda.shared.array(MAX_THREADS, float32)
    shared = cuda.shared.array(2, int32)          # [0]: the tile index
    carry_box = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    if t == 0:
        shared[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    b = shared[0]
    base = b * COARSEN * T
    for j in range(t, COARSEN * T, T):
        tile[j] = x[base + j] if base + j < x.size else float32(0)
    cuda.syncthreads()
    for j in range(t * COARSEN + 1, (t + 1) * COARSEN):
        tile[j] += tile[j - 1]
    totals[t] = tile[(t + 1) * COARSEN - 1]
    stride = 1
    while stride < T:
        cuda.syncthreads()
        v = totals[t]
        if t >= stride:
            v += totals[t - stride]
        cuda.syncthreads()
        totals[t] = v
        stride *= 2
    cuda.syncthreads()
    if t == 0:
        total = totals[T - 1]
        if b > 0:
            aggregates[b] = total
            cuda.threadfence()
            cuda.atomic.max(status, b, 1)           # 1: the aggregate is there
        carry = float32(0)
        j = b - 1
        while j >= 0:
            s = cuda.atomic.or_(status, j, 0)      # an atomic read of the status
            if s == 2:
                cuda.threadfence()
                carry += cuda.atomic.max(prefixes, j, float32(-np.inf))
                j = -1
            elif s == 1:
                cuda.threadfence()
                carry += cuda.atomic.max(aggregates, j, float32(-np.inf))
                j -= 1
        prefixes[b] = carry + total
        cuda.threadfence()
        cuda.atomic.max(status, b, 2)               # 2: the inclusive prefix is there
        carry_box[0] = carry
    cuda.syncthreads()
    add = carry_box[0]
    if t > 0:
        add += totals[t - 1]
    for j in range(t * COARSEN, (t + 1) * COARSEN):
        tile[j] += add
    cuda.syncthreads()
    for j in range(t, COARSEN * T, T):
        if base + j < y.size:
            y[base + j] = tile[j]
