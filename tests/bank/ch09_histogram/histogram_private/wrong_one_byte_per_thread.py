# bank: privatized correctly but without coarsening: each thread counts only the byte at its global index, so with a grid smaller than the data most bytes are never counted; it must lose the points.
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
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i], 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        cuda.atomic.add(hist, b, bins[b])
