# bank: scans all in-neighbours with a while loop and a found flag, then stores once (no break); slower but correct, full marks.
# naive: none
@cuda.jit
def bfs_pull_kernel(in_ptr, in_col, levels, level, changed):
    v = cuda.grid(1)
    if v >= levels.size:
        return
    if levels[v] != -1:
        return
    found = False
    e = in_ptr[v]
    end = in_ptr[v + 1]
    while e < end:
        if levels[in_col[e]] == level:
            found = True
        e += 1
    if found:
        levels[v] = level + 1
        changed[0] = 1
