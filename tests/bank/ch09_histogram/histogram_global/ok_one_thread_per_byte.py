# bank: one thread per byte with explicit block and thread ids, a guard, and cuda.atomic.add on the byte's bin; correct, full marks.
# naive: none
@cuda.jit
def histogram_global_kernel(data, hist):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)
