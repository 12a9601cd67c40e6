# bank: guards with the number of vertices (levels.size) instead of the number of edges, as a vertex-centric kernel would, so the edges past the n-th are never looked at and vertices stay unlabelled; it must lose the points.
# naive: none
@cuda.jit
def bfs_edge_kernel(src, dst, levels, level, changed):
    e = cuda.grid(1)
    if e < levels.size and levels[src[e]] == level:
        u = dst[e]
        if levels[u] == -1:
            levels[u] = level + 1
            changed[0] = 1
