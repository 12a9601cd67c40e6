# bank: offsets from an inclusive scan (each curve's own count included), so every curve's points start where they should end and the last curve writes past the end of points; it must lose its points.
# naive: none
from numba import float32


@cuda.jit
def _inclusive(counts, offsets):
    if cuda.grid(1) == 0:
        run = 0
        for i in range(counts.size):
            run += counts[i]
            offsets[i] = run


@cuda.jit
def _tess(cp, counts, offsets, points):
    b = cuda.blockIdx.x
    for k in range(cuda.threadIdx.x, counts[b], cuda.blockDim.x):
        j = offsets[b] + k
        if j < points.shape[0]:
            u = float32(k) / float32(counts[b] - 1)
            w = float32(1.0) - u
            for c in range(2):
                points[j, c] = (w * w * cp[b, 0, c] + float32(2.0) * u * w * cp[b, 1, c]
                                + u * u * cp[b, 2, c])


def tessellate(cp, counts, points, threads):
    offsets = cuda.device_array(cp.shape[0], np.int32)
    _inclusive[1, 1](counts, offsets)
    _tess[cp.shape[0], threads](cp, counts, offsets, points)
