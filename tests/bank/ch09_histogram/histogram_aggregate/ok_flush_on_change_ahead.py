# bank: aggregates by looking one step ahead: a run is added when the thread's next byte differs or the data ends (no flush after the loop needed), while loops; correct, full marks.
# naive: none
from numba import uint32

NUM_BINS = 256


@cuda.jit
def histogram_aggregate_kernel(data, hist):
    bins = cuda.shared.array(NUM_BINS, uint32)
    b = cuda.threadIdx.x
    while b < NUM_BINS:
        bins[b] = 0
        b += cuda.blockDim.x
    cuda.syncthreads()
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    run = 0
    while i < data.size:
        run += 1
        after = i + stride
        if after >= data.size or data[after] != data[i]:
            cuda.atomic.add(bins, data[i], run)
            run = 0
        i = after
    cuda.syncthreads()
    b = cuda.threadIdx.x
    while b < NUM_BINS:
        cuda.atomic.add(hist, b, bins[b])
        b += cuda.blockDim.x
