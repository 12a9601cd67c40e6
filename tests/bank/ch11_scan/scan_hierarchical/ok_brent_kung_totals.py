# bank: three phases with an unpadded tile (bank conflicts, still right), Brent-Kung in place on the thread totals, and the carries added with a grid-stride-like loop; correct, full marks.
# naive: none
from numba import float32

MAX_THREADS = 256
COARSEN = 16
TILE = COARSEN * MAX_THREADS


@cuda.jit
def scan_sections_kernel(x, y, sums):
    tile = cuda.shared.array(TILE, float32)
    totals = cuda.shared.array(MAX_THREADS, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    base = cuda.blockIdx.x * COARSEN * T
    for j in range(t, COARSEN * T, T):
        tile[j] = x[base + j] if base + j < x.size else 0
    cuda.syncthreads()
    for j in range(t * COARSEN + 1, (t + 1) * COARSEN):
        tile[j] += tile[j - 1]
    totals[t] = tile[(t + 1) * COARSEN - 1]
    stride = 1
    while stride < T:
        cuda.syncthreads()
        j = (t + 1) * 2 * stride - 1
        if j < T:
            totals[j] += totals[j - stride]
        stride *= 2
    stride = T // 4
    while stride > 0:
        cuda.syncthreads()
        j = (t + 1) * 2 * stride - 1
        if j + stride < T:
            totals[j + stride] += totals[j]
        stride //= 2
    cuda.syncthreads()
    if t > 0:
        for j in range(t * COARSEN, (t + 1) * COARSEN):
            tile[j] += totals[t - 1]
    cuda.syncthreads()
    for j in range(t, COARSEN * T, T):
        if base + j < y.size:
            y[base + j] = tile[j]
    if t == 0:
        sums[cuda.blockIdx.x] = totals[T - 1]


@cuda.jit
def add_carries_kernel(y, carries):
    b = cuda.blockIdx.x
    T = cuda.blockDim.x
    i = b * COARSEN * T + cuda.threadIdx.x
    end = min((b + 1) * COARSEN * T, y.size)
    while b > 0 and i < end:
        y[i] = y[i] + carries[b - 1]
        i += T


scan_hierarchical = (scan_sections_kernel, add_carries_kernel)
