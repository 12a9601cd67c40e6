# bank: tests levels[u] == -1 and then stores level + 1 with a plain store, so two frontier vertices sharing a neighbour can both claim and append it; a plain allclose test passes it (the levels come out right); it must lose the points.
# naive: allclose
@cuda.jit
def bfs_frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if levels[u] == -1:
                levels[u] = level + 1
                next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
