# bank: NVIDIA-only code in the warp-portable exercise: the mask 0xffffffff, offsets from 16 and the warp index // 32 are written out; right at warp size 32 (a typical test passes it), it must lose the points because the hidden tests run it at warp size 64.
# naive: allclose
from numba import float32


@cuda.jit
def warp_sums_kernel(x, sums):
    i = cuda.grid(1)
    v = x[i] if i < x.size else float32(0)
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
    if i % 32 == 0 and i // 32 < sums.size:
        sums[i // 32] = v
