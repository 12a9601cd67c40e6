# bank: another style: a block queue of exactly 64 (the least the check allows), a plain read skips visited neighbours before the cas, every thread computes the block's count itself after the barrier, a block that found nothing makes no global atomic at all, and thread 0 alone copies the queue out; full marks.
# naive: none
from numba import int32

SMALL_QUEUE = 64


@cuda.jit
def bfs_frontier_private_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    b_queue = cuda.shared.array(SMALL_QUEUE, int32)
    b_count = cuda.shared.array(1, int32)
    b_start = cuda.shared.array(1, int32)
    if cuda.threadIdx.x == 0:
        b_count[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if levels[u] != -1:
                continue
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                k = cuda.atomic.add(b_count, 0, 1)
                if k < SMALL_QUEUE:
                    b_queue[k] = u
                else:
                    next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
    cuda.syncthreads()
    count = min(b_count[0], SMALL_QUEUE)
    if cuda.threadIdx.x == 0 and count > 0:
        start = cuda.atomic.add(next_size, 0, count)
        for k in range(count):
            next_frontier[start + k] = b_queue[k]
