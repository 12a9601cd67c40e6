# bank: follows every edge backwards (from dst to src), which is a search of the reversed graph: vertices that reach the source get levels, vertices the source reaches may not; it must lose the points.
# naive: none
@cuda.jit
def bfs_edge_kernel(src, dst, levels, level, changed):
    e = cuda.grid(1)
    if e < src.size and levels[dst[e]] == level:
        u = src[e]
        if levels[u] == -1:
            levels[u] = level + 1
            changed[0] = 1
