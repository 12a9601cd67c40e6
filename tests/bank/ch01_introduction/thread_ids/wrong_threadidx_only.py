# bank: uses threadIdx.x as the global index (ignores blockIdx), so only the first block's elements are written, and each by every block; it must lose the points.
# naive: none
@cuda.jit
def thread_ids(block, thread, index):
    i = cuda.threadIdx.x
    if i < index.size:
        block[i] = cuda.blockIdx.x
        thread[i] = cuda.threadIdx.x
        index[i] = i
