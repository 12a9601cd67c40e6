# bank: no bounds guard: the threads past the last vertex read levels[v] and in_ptr[v + 1] out of bounds; a test whose vertex count is a multiple of the block size passes it; it must lose the points.
# naive: allclose
@cuda.jit
def bfs_pull_kernel(in_ptr, in_col, levels, level, changed):
    v = cuda.grid(1)
    if levels[v] == -1:
        for e in range(in_ptr[v], in_ptr[v + 1]):
            if levels[in_col[e]] == level:
                levels[v] = level + 1
                changed[0] = 1
                break
