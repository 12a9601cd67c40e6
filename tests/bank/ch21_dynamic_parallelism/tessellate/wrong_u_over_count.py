# bank: u = k / count instead of k / (count − 1), so no curve reaches its last control point and every point after the first sits a little early on the curve; it must lose its points.
# naive: none
from numba import float32


@cuda.jit
def _tess(cp, counts, offsets, points):
    b = cuda.blockIdx.x
    for k in range(cuda.threadIdx.x, counts[b], cuda.blockDim.x):
        u = float32(k) / float32(counts[b])
        w = float32(1.0) - u
        for c in range(2):
            points[offsets[b] + k, c] = (w * w * cp[b, 0, c] + float32(2.0) * u * w * cp[b, 1, c]
                                         + u * u * cp[b, 2, c])


def tessellate(cp, counts, points, threads):
    offsets = cuda.device_array(cp.shape[0], np.int32)
    ag.problems.ch21.exclusive_scan(counts, offsets)
    _tess[cp.shape[0], threads](cp, counts, offsets, points)
