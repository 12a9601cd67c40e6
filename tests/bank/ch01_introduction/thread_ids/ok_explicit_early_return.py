# bank: the index spelled out from blockIdx, blockDim and threadIdx, with an early return for spare threads; correct, full marks.
# naive: none
@cuda.jit
def thread_ids(block, thread, index):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    i = b * cuda.blockDim.x + t
    if i >= block.shape[0]:
        return
    block[i] = b
    thread[i] = t
    index[i] = i
