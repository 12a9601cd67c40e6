# bank: when the byte changes, adds the finished run to the NEW byte's bin instead of the previous one, so every count lands in a wrong bin (the totals still add up to n); it must lose the points.
# naive: none
from numba import uint32

NUM_BINS = 256


@cuda.jit
def histogram_aggregate_kernel(data, hist):
    bins = cuda.shared.array(NUM_BINS, uint32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    previous, run = -1, 0
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        value = int(data[i])
        if value == previous:
            run += 1
        else:
            if run > 0:
                cuda.atomic.add(bins, value, run)
            previous, run = value, 1
    if run > 0:
        cuda.atomic.add(bins, previous, run)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        cuda.atomic.add(hist, b, bins[b])
