# bank: labels with cuda.atomic.cas but ignores what it returned and appends every neighbour, visited or not, so vertices return to later frontiers (the levels stay right, but the queue overflows or repeats work); it must lose the points.
# naive: none
@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            cuda.atomic.cas(levels, u, -1, level + 1)
            next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
