# bank: a block queue with no overflow path: a vertex that finds the queue full is labelled but never appended, so it is missing from the next frontier (the star of 150 vertices: its source's one thread appends 149 in one launch, past a queue of 128); it must lose the points.
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
    cuda.syncthreads()
    if t == 0:
        count = min(b_count[0], BLOCK_QUEUE)
        b_count[0] = count
        b_start[0] = cuda.atomic.add(next_size, 0, count)
    cuda.syncthreads()
    for k in range(t, b_count[0], cuda.blockDim.x):
        next_frontier[b_start[0] + k] = b_queue[k]
