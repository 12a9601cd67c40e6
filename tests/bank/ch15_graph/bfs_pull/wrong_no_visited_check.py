# bank: does not skip vertices that already have a level, so a visited vertex with a parent in a later level is relabelled deeper; it must lose the points.
# naive: none
@cuda.jit
def bfs_pull_kernel(in_ptr, in_col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size:
        for e in range(in_ptr[v], in_ptr[v + 1]):
            if levels[in_col[e]] == level:
                levels[v] = level + 1
                changed[0] = 1
                break
