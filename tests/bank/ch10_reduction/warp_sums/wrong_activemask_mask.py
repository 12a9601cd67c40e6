# bank: the shuffles' mask taken from cuda.activemask(): a GPU that happens to keep the warp converged gives it every lane (a typical test there passes), but activemask() names only the lanes converged at that instant, not the lanes that must take part, so the sum may silently be partial; CPU mode splits the warp there and stops the first shuffle that reads a lane outside the mask; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def warp_sums_kernel(x, sums):
    i = cuda.grid(1)
    v = float32(0)
    if i < x.size:
        v = x[i]
    mask = cuda.activemask()
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(mask, v, offset)
        offset //= 2
    w = i // cuda.warpsize
    if i % cuda.warpsize == 0 and w < sums.size:
        sums[w] = v
