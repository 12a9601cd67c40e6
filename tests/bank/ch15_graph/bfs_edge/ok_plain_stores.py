# bank: the textbook edge-centric kernel: one thread per edge, an edge from the current level to an unvisited vertex labels it with a plain store (benign race); full marks.
# naive: none
@cuda.jit
def bfs_edge_kernel(src, dst, levels, level, changed):
    e = cuda.grid(1)
    if e < src.size and levels[src[e]] == level:
        u = dst[e]
        if levels[u] == -1:
            levels[u] = level + 1
            changed[0] = 1
