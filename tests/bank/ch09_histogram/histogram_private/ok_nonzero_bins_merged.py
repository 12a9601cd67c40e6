# bank: privatized with a grid-stride loop and both barriers, merging only the bins this block counted (a nonzero private bin), so a block adds at most 256 times into `hist`; correct, full marks.
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
        if bins[b] > 0:
            cuda.atomic.add(hist, b, bins[b])
