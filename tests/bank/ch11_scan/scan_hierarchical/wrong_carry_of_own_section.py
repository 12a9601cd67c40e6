# bank: the section kernel is right, but every block adds carries[b] (the scan of the sums up to and including its own section) instead of carries[b - 1], so each section's total is counted twice; it must lose the points.
# naive: none
from numba import float32

MAX_THREADS = 256
COARSEN = 16
TILE_WORDS = COARSEN * MAX_THREADS + COARSEN * MAX_THREADS // 32


@cuda.jit
def scan_sections_kernel(x, y, sums):
    tile = cuda.shared.array(TILE_WORDS, float32)
    part = cuda.shared.array((2, MAX_THREADS), float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    start = cuda.blockIdx.x * COARSEN * T
    for k in range(COARSEN):
        j = k * T + t
        tile[j + j // 32] = x[start + j] if start + j < x.size else float32(0)
    cuda.syncthreads()
    running = float32(0)
    for k in range(COARSEN):
        j = t * COARSEN + k
        running += tile[j + j // 32]
        tile[j + j // 32] = running
    part[0, t] = running
    cuda.syncthreads()
    src = 0
    stride = 1
    while stride < T:
        if t >= stride:
            part[1 - src, t] = part[src, t] + part[src, t - stride]
        else:
            part[1 - src, t] = part[src, t]
        cuda.syncthreads()
        src = 1 - src
        stride *= 2
    if t > 0:
        for k in range(COARSEN):
            j = t * COARSEN + k
            tile[j + j // 32] += part[src, t - 1]
    cuda.syncthreads()
    for k in range(COARSEN):
        j = k * T + t
        if start + j < y.size:
            y[start + j] = tile[j + j // 32]
    if t == T - 1:
        sums[cuda.blockIdx.x] = part[src, t]


@cuda.jit
def add_carries_kernel(y, carries):
    b = cuda.blockIdx.x
    T = cuda.blockDim.x
    for k in range(COARSEN):
        i = b * COARSEN * T + k * T + cuda.threadIdx.x
        if i < y.size:
            y[i] += carries[b]


scan_hierarchical = (scan_sections_kernel, add_carries_kernel)
