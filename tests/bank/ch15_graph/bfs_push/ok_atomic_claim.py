# bank: claims each neighbour with cuda.atomic.cas and raises the flag with cuda.atomic.max, an early return for idle threads; correct, full marks.
# naive: none
@cuda.jit
def bfs_push_kernel(row_ptr, col, levels, level, changed):
    v = cuda.grid(1)
    if v >= levels.size:
        return
    if levels[v] != level:
        return
    start = row_ptr[v]
    end = row_ptr[v + 1]
    for e in range(start, end):
        if cuda.atomic.cas(levels, col[e], -1, level + 1) == -1:
            cuda.atomic.max(changed, 0, 1)
