# bank: the global index assumes 128 threads per block (blockIdx.x * 128 + threadIdx.x), right only for the visible launch shape; hidden block sizes break it, so it must lose the points.
# naive: allclose
@cuda.jit
def thread_ids(block, thread, index):
    i = cuda.blockIdx.x * 128 + cuda.threadIdx.x
    if i < index.size:
        block[i] = cuda.blockIdx.x
        thread[i] = cuda.threadIdx.x
        index[i] = i
