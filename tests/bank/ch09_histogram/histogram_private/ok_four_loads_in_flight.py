# bank: privatized, the grid-stride loop unrolled by four (four loads before four shared atomics) with a remainder loop, empty bins not merged; correct, full marks.
# naive: none
from numba import uint32

NUM_BINS = 256


@cuda.jit
def histogram_private_kernel(data, hist):
    bins = cuda.shared.array(NUM_BINS, uint32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    n, stride = data.size, cuda.gridsize(1)
    i = cuda.grid(1)
    while i + 3 * stride < n:
        a, b1, c, d = data[i], data[i + stride], data[i + 2 * stride], data[i + 3 * stride]
        cuda.atomic.add(bins, a, 1)
        cuda.atomic.add(bins, b1, 1)
        cuda.atomic.add(bins, c, 1)
        cuda.atomic.add(bins, d, 1)
        i += 4 * stride
    while i < n:
        cuda.atomic.add(bins, data[i], 1)
        i += stride
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if bins[b] > 0:
            cuda.atomic.add(hist, b, bins[b])
