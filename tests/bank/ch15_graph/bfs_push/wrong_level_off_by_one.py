# bank: labels a neighbour with the current level instead of level + 1 (so a wave spreads further within its own launch); it must lose the points.
# naive: none
@cuda.jit
def bfs_push_kernel(row_ptr, col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size and levels[v] == level:
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if levels[u] == -1:
                levels[u] = level
                changed[0] = 1
