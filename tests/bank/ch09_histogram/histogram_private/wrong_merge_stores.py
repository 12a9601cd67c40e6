# bank: merges each block's private counts with a store, hist[b] = bins[b], so the blocks overwrite one another's counts (right only with one block); it must lose the points.
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
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, data[i], 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist[b] = bins[b]
