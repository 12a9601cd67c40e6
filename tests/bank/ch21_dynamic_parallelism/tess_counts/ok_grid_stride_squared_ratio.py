# bank: a grid-stride loop over the curves, the curvature as the square root of a ratio of squared lengths in float64, clamped on both sides before the conversion; correct, full marks.
# naive: none
import math


@cuda.jit
def tess_counts_kernel(cp, counts):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, cp.shape[0], stride):
        p0x, p0y = float(cp[i, 0, 0]), float(cp[i, 0, 1])
        p1x, p1y = float(cp[i, 1, 0]), float(cp[i, 1, 1])
        p2x, p2y = float(cp[i, 2, 0]), float(cp[i, 2, 1])
        mid2 = (p1x - (p0x + p2x) / 2) ** 2 + (p1y - (p0y + p2y) / 2) ** 2
        chord2 = (p2x - p0x) ** 2 + (p2y - p0y) ** 2
        v = 16.0 * math.sqrt(mid2 / chord2)
        v = max(4.0, min(v, 32.0))
        counts[i] = int(v)
