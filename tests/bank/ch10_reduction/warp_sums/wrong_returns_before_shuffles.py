# bank: threads past the end return before the shuffles, and the others shuffle with the mask of the whole warp, which names the lanes that left: undefined behaviour in CUDA (every lane in the mask must execute the shuffle); an H200 computed every sum right, so a GPU's own cases pass it; CPU mode stops the first shuffle that names a lane that left (on a GPU the judge runs the other warp size's hidden cases in CPU mode); it must lose the points.
# naive: none
from numba import float32, uint64


@cuda.jit
def warp_sums_kernel(x, sums):
    i = cuda.grid(1)
    if i >= x.size:
        return
    v = x[i]
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(mask, v, offset)
        offset //= 2
    w = i // cuda.warpsize
    if i % cuda.warpsize == 0:
        sums[w] = v
