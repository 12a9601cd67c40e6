# bank: stores threadIdx.x into block[] and blockIdx.x into thread[] (the ids swapped); it must lose the points.
# naive: none
@cuda.jit
def thread_ids(block, thread, index):
    i = cuda.grid(1)
    if i < index.size:
        block[i] = cuda.threadIdx.x
        thread[i] = cuda.blockIdx.x
        index[i] = i
