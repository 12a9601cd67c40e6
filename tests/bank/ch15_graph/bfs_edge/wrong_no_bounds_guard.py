# bank: no bounds guard: the threads of the last block past the last edge read src[e] out of bounds; it must lose the points.
# naive: none
@cuda.jit
def bfs_edge_kernel(src, dst, levels, level, changed):
    e = cuda.grid(1)
    if levels[src[e]] == level:
        u = dst[e]
        if levels[u] == -1:
            levels[u] = level + 1
            changed[0] = 1
