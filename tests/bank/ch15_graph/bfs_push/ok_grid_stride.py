# bank: a grid-stride loop over the vertices (each thread may take several), the flag set once per thread after its loop; correct, full marks.
# naive: none
@cuda.jit
def bfs_push_kernel(row_ptr, col, levels, level, changed):
    found = False
    for v in range(cuda.grid(1), levels.size, cuda.gridsize(1)):
        if levels[v] == level:
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if levels[u] == -1:
                    levels[u] = level + 1
                    found = True
    if found:
        changed[0] = 1
