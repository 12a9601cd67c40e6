# bank: no bounds guard: the threads of the last block past the last vertex read levels[v] out of bounds; a test whose vertex count is a multiple of the block size passes it; it must lose the points.
# naive: allclose
@cuda.jit
def bfs_push_kernel(row_ptr, col, levels, level, changed):
    v = cuda.grid(1)
    if levels[v] == level:
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if levels[u] == -1:
                levels[u] = level + 1
                changed[0] = 1
