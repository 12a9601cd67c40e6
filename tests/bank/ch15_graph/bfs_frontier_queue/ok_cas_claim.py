# bank: the textbook frontier kernel: cuda.atomic.cas claims each unvisited neighbour, the claiming thread takes a slot with cuda.atomic.add; full marks.
# naive: none
@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                slot = cuda.atomic.add(next_size, 0, 1)
                next_frontier[slot] = u
