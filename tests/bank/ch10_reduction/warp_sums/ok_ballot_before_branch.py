# bank: NVIDIA's pattern for a branch: the mask taken with cuda.ballot_sync(full, i < n) before the branch names exactly the lanes with an element; only they shuffle, and a lane adds what it reads only from a lane inside the mask (the others send nothing defined); portable at warp sizes 32 and 64, full marks.
# naive: none
from numba import uint64


@cuda.jit
def warp_sums_kernel(x, sums):
    i = cuda.grid(1)
    lane = cuda.laneid
    full = ~uint64(0) >> (64 - cuda.warpsize)
    mask = cuda.ballot_sync(full, i < x.size)     # every lane votes, before any branch
    if i < x.size:
        have = cuda.popc(mask)                    # lanes 0 .. have - 1 of this warp hold elements
        v = x[i]
        offset = cuda.warpsize // 2
        while offset > 0:
            other = cuda.shfl_down_sync(mask, v, offset)
            if lane + offset < have:
                v += other
            offset //= 2
        if lane == 0:
            sums[i // cuda.warpsize] = v
