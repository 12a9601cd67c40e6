# bank: a grid-stride loop over the edges that looks at the destination first and claims it with cuda.atomic.cas, setting the flag with an atomic max; another correct style; full marks.
# naive: none
@cuda.jit
def bfs_edge_kernel(src, dst, levels, level, changed):
    for e in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        u = dst[e]
        if levels[u] != -1:
            continue
        if levels[src[e]] == level:
            if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                cuda.atomic.max(changed, 0, 1)
