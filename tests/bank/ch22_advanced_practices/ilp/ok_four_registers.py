# bank: the notebook's design: four loads a grid's width apart into four registers, each guarded, then four guarded stores; it must get full marks.
# naive: none
from numba import float32


@cuda.jit
def ilp_kernel(x, out, a, b):
    t = cuda.grid(1)
    w = cuda.gridsize(1)
    n = x.size
    v0 = float32(0.0)
    v1 = float32(0.0)
    v2 = float32(0.0)
    v3 = float32(0.0)
    if t < n:
        v0 = x[t]
    if t + w < n:
        v1 = x[t + w]
    if t + 2 * w < n:
        v2 = x[t + 2 * w]
    if t + 3 * w < n:
        v3 = x[t + 3 * w]
    if t < n:
        out[t] = a * v0 + b
    if t + w < n:
        out[t + w] = a * v1 + b
    if t + 2 * w < n:
        out[t + 2 * w] = a * v2 + b
    if t + 3 * w < n:
        out[t + 3 * w] = a * v3 + b
