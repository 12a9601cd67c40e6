# bank: splits a node that holds capacity points or more (>=), where the rule is more than capacity, so a node holding exactly capacity points splits one level too far; it must lose its points.
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
def _count(leaf, first, table):
    i = cuda.grid(1)
    if i < leaf.size and leaf[i] >= first:
        cuda.atomic.add(table, leaf[i] - first, 1)


@cuda.jit
def _split(x, y, leaf, first, scale, capacity, table):
    i = cuda.grid(1)
    if i < leaf.size:
        code = leaf[i]
        if code >= first and table[code - first] >= capacity:
            leaf[i] = 4 * code + (int32(x[i] * scale) & 1) + 2 * (int32(y[i] * scale) & 1)


def build_quadtree(x, y, capacity, max_depth, leaf, table, threads):
    blocks = (leaf.size + threads - 1) // threads
    _root[blocks, threads](leaf)
    for d in range(max_depth):
        _clear[(4 ** d + threads - 1) // threads, threads](table, 4 ** d)
        _count[blocks, threads](leaf, 4 ** d, table)
        _split[blocks, threads](x, y, leaf, 4 ** d, float(2 ** (d + 1)), capacity, table)
