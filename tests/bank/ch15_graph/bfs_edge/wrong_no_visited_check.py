# bank: labels every destination of an edge from the current level, visited or not, so vertices are relabelled by later levels and the search never stops on its own; it must lose the points.
# naive: none
@cuda.jit
def bfs_edge_kernel(src, dst, levels, level, changed):
    e = cuda.grid(1)
    if e < src.size and levels[src[e]] == level:
        levels[dst[e]] = level + 1
        changed[0] = 1
