# bank: claims neighbours with cuda.atomic.cas but takes its slot with a plain read and store of next_size, so two threads can take the same slot (the race detector flags it every time); a plain allclose test passes it; it must lose the points.
# naive: allclose
@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                slot = next_size[0]
                next_size[0] = slot + 1
                next_frontier[slot] = u
