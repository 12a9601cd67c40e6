# bank: no bounds guard: the threads of the last block past the end of the frontier read frontier[i] out of bounds; it must lose the points.
# naive: none
@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    i = cuda.grid(1)
    v = frontier[i]
    for e in range(row_ptr[v], row_ptr[v + 1]):
        u = col[e]
        if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
            slot = cuda.atomic.add(next_size, 0, 1)
            next_frontier[slot] = u
