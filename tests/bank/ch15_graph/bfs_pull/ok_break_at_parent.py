# bank: the textbook pull kernel: an unvisited vertex scans its in-neighbours and stops at the first parent of the current level; full marks.
# naive: none
@cuda.jit
def bfs_pull_kernel(in_ptr, in_col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size and levels[v] == -1:
        for e in range(in_ptr[v], in_ptr[v + 1]):
            if levels[in_col[e]] == level:
                levels[v] = level + 1
                changed[0] = 1
                break
