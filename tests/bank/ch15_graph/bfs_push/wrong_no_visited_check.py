# bank: labels every out-neighbour of a frontier vertex, visited or not, so later levels overwrite earlier ones (and the waves never die out); it must lose the points.
# naive: none
@cuda.jit
def bfs_push_kernel(row_ptr, col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size and levels[v] == level:
        for e in range(row_ptr[v], row_ptr[v + 1]):
            levels[col[e]] = level + 1
            changed[0] = 1
