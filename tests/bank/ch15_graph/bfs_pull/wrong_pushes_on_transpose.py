# bank: treats the transposed arrays as the graph and pushes along them, so it searches the reversed graph (who reaches the source, not whom the source reaches); it must lose the points.
# naive: none
@cuda.jit
def bfs_pull_kernel(in_ptr, in_col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size and levels[v] == level:
        for e in range(in_ptr[v], in_ptr[v + 1]):
            u = in_col[e]
            if levels[u] == -1:
                levels[u] = level + 1
                changed[0] = 1
