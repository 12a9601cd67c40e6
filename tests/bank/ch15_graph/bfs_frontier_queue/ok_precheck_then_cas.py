# bank: reads a neighbour's level first and skips visited ones without an atomic, then claims the rest with cuda.atomic.cas (the cas decides); a grid-stride loop over the frontier; full marks.
# naive: none
@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    for i in range(cuda.grid(1), frontier.size, cuda.gridsize(1)):
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if levels[u] != -1:
                continue
            old = cuda.atomic.cas(levels, u, -1, level + 1)
            if old == -1:
                next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
