# bank: aggregates runs but never flushes the run still in registers when the loop ends, so each thread's last run is lost (most visible on the scanned page); it must lose the points.
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
                cuda.atomic.add(bins, previous, run)
            previous, run = value, 1
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        cuda.atomic.add(hist, b, bins[b])
