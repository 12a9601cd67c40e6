# bank: hands in 15.4's frontier kernel: right levels and frontiers, but one atomic on next_size per vertex appended, not one per block; a plain allclose test passes it; it must lose the points (CPU mode: "not privatized").
# naive: allclose
@cuda.jit
def bfs_frontier_private_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
    i = cuda.grid(1)
    if i < frontier.size:
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                slot = cuda.atomic.add(next_size, 0, 1)
                next_frontier[slot] = u
