# bank: counts and splits in one kernel per wave with a barrier between them, but a barrier waits only for the threads of its own block: a point splits before the other blocks have counted its node, so crowded nodes look sparse; it must lose its points.
# naive: none
from numba import int32


@cuda.jit
def _root(leaf):
    i = cuda.grid(1)
    if i < leaf.size:
        leaf[i] = 1


@cuda.jit
def _clear(table, m):
    j = cuda.grid(1)
    if j < m:
        table[j] = 0


@cuda.jit
def _wave(x, y, leaf, first, scale, capacity, table):
    i = cuda.grid(1)
    code = 0
    if i < leaf.size:
        code = leaf[i]
        if code >= first:
            cuda.atomic.add(table, code - first, 1)
    cuda.syncthreads()
    if i < leaf.size and code >= first and table[code - first] > capacity:
        leaf[i] = 4 * code + (int32(x[i] * scale) & 1) + 2 * (int32(y[i] * scale) & 1)


def build_quadtree(x, y, capacity, max_depth, leaf, table, threads):
    blocks = (leaf.size + threads - 1) // threads
    _root[blocks, threads](leaf)
    for d in range(max_depth):
        _clear[(4 ** d + threads - 1) // threads, threads](table, 4 ** d)
        _wave[blocks, threads](x, y, leaf, 4 ** d, float(2 ** (d + 1)), capacity, table)
