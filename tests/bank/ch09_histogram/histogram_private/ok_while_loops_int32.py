# bank: privatized with while loops, an int32 private histogram, a grid-stride loop and both barriers, merging every bin (zeros too) atomically; correct, full marks.
# naive: none
from numba import int32

NUM_BINS = 256


@cuda.jit
def histogram_private_kernel(data, hist):
    private = cuda.shared.array(NUM_BINS, int32)
    b = cuda.threadIdx.x
    while b < NUM_BINS:
        private[b] = 0
        b += cuda.blockDim.x
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < data.size:
        cuda.atomic.add(private, data[i], 1)
        i += cuda.gridsize(1)
    cuda.syncthreads()
    b = cuda.threadIdx.x
    while b < NUM_BINS:
        cuda.atomic.add(hist, b, private[b])
        b += cuda.blockDim.x
