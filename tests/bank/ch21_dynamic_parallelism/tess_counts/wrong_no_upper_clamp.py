# bank: clamps the count below at 4 but not above at 32, so a very bent curve asks for more points than the buffer of a curve holds; it must lose its points.
# naive: none
import math


@cuda.jit
def tess_counts_kernel(cp, counts):
    i = cuda.grid(1)
    if i < cp.shape[0]:
        mx = cp[i, 1, 0] - 0.5 * (cp[i, 0, 0] + cp[i, 2, 0])
        my = cp[i, 1, 1] - 0.5 * (cp[i, 0, 1] + cp[i, 2, 1])
        cx = cp[i, 2, 0] - cp[i, 0, 0]
        cy = cp[i, 2, 1] - cp[i, 0, 1]
        v = 16.0 * math.sqrt(mx * mx + my * my) / math.sqrt(cx * cx + cy * cy)
        counts[i] = max(int(v), 4)
