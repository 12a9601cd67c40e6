# bank: PMPP's privatized queue: each block appends to a queue in shared memory with a shared counter, then reserves room for the whole block with one global atomic and copies its entries out (overflow goes straight to the global queue); full marks.
# naive: none
from numba import int32

LOCAL = 64


@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    s_queue = cuda.shared.array(LOCAL, int32)
    s_count = cuda.shared.array(1, int32)
    s_start = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        s_count[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                mine = cuda.atomic.add(s_count, 0, 1)
                if mine < LOCAL:
                    s_queue[mine] = u
                else:                                  # the block's queue is full
                    next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
    cuda.syncthreads()
    if t == 0:
        s_count[0] = min(s_count[0], LOCAL)
        s_start[0] = cuda.atomic.add(next_size, 0, s_count[0])
    cuda.syncthreads()
    for k in range(t, s_count[0], cuda.blockDim.x):
        next_frontier[s_start[0] + k] = s_queue[k]
