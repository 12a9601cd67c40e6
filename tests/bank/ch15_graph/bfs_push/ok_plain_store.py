# bank: the textbook push kernel: vertices of the current level label their unvisited out-neighbours with plain stores (a benign race: every writer stores level + 1); full marks.
# naive: none
@cuda.jit
def bfs_push_kernel(row_ptr, col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size and levels[v] == level:
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if levels[u] == -1:
                levels[u] = level + 1
                changed[0] = 1
