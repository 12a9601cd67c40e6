# bank: keeps each point's depth in an array of its own and takes the quadrant from the bits of its cell's integer coordinates, clears the counters with a grid-stride kernel of a fixed grid, and counts only the points at the wave's depth; correct, full marks.
# naive: none
@cuda.jit
def _init(depth, leaf):
    i = cuda.grid(1)
    if i < leaf.size:
        depth[i] = 0
        leaf[i] = 1


@cuda.jit
def _clear(table, m):
    for j in range(cuda.grid(1), m, cuda.gridsize(1)):
        table[j] = 0


@cuda.jit
def _count(depth, leaf, d, table):
    i = cuda.grid(1)
    if i < leaf.size and depth[i] == d:
        cuda.atomic.add(table, leaf[i] - (1 << (2 * d)), 1)


@cuda.jit
def _split(x, y, depth, leaf, d, capacity, table):
    i = cuda.grid(1)
    if i < leaf.size and depth[i] == d:
        if table[leaf[i] - (1 << (2 * d))] > capacity:
            cx = int(x[i] * (1 << (d + 1)))
            cy = int(y[i] * (1 << (d + 1)))
            leaf[i] = leaf[i] * 4 + (cx % 2) + 2 * (cy % 2)
            depth[i] = d + 1


def build_quadtree(x, y, capacity, max_depth, leaf, table, threads):
    n = leaf.size
    blocks = (n + threads - 1) // threads
    depth = cuda.device_array(n, np.int32)
    _init[blocks, threads](depth, leaf)
    for d in range(max_depth):
        _clear[4, threads](table, 4 ** d)
        _count[blocks, threads](depth, leaf, d, table)
        _split[blocks, threads](x, y, depth, leaf, d, capacity, table)
