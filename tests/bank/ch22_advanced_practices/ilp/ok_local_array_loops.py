# bank: the four values in a cuda.local.array of 4, filled by one loop and stored by another (the compiler unrolls both into registers); it must get full marks.
# naive: none
from numba import float32

ILP = 4


@cuda.jit
def ilp_kernel(x, out, a, b):
    t = cuda.grid(1)
    w = cuda.gridsize(1)
    v = cuda.local.array(ILP, float32)
    for k in range(ILP):
        if t + k * w < x.size:
            v[k] = x[t + k * w]
    for k in range(ILP):
        if t + k * w < x.size:
            out[t + k * w] = b + v[k] * a
