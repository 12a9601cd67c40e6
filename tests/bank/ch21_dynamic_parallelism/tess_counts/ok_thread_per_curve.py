# bank: one thread per curve, the midpoint's distance over the chord's length in float32, times 16, clamped to 32 as a float, truncated and raised to 4; correct, full marks.
# naive: none
import math

from numba import float32, int32


@cuda.jit
def tess_counts_kernel(cp, counts):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < cp.shape[0]:
        mx = cp[i, 1, 0] - float32(0.5) * (cp[i, 0, 0] + cp[i, 2, 0])
        my = cp[i, 1, 1] - float32(0.5) * (cp[i, 0, 1] + cp[i, 2, 1])
        cx = cp[i, 2, 0] - cp[i, 0, 0]
        cy = cp[i, 2, 1] - cp[i, 0, 1]
        c = math.sqrt(mx * mx + my * my) / math.sqrt(cx * cx + cy * cy)
        v = min(c * float32(16.0), float32(32.0))
        counts[i] = max(int32(v), 4)
