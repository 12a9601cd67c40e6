# bank: PMPP's privatized queue as the notebook describes it: a block queue of 128 in shared memory with a shared counter, overflow straight to the global queue, one global atomic per block to reserve room, then the copy; full marks.
# naive: none
from numba import int32

BLOCK_QUEUE = 128


@cuda.jit
def bfs_frontier_private_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    b_queue = cuda.shared.array(BLOCK_QUEUE, int32)
    b_count = cuda.shared.array(1, int32)
    b_start = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        b_count[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                k = cuda.atomic.add(b_count, 0, 1)
                if k < BLOCK_QUEUE:
                    b_queue[k] = u
                else:
                    next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
    cuda.syncthreads()
    if t == 0:
        count = min(b_count[0], BLOCK_QUEUE)
        b_count[0] = count
        b_start[0] = cuda.atomic.add(next_size, 0, count)
    cuda.syncthreads()
    for k in range(t, b_count[0], cuda.blockDim.x):
        next_frontier[b_start[0] + k] = b_queue[k]
