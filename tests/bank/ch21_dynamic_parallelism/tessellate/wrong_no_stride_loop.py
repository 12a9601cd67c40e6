# bank: one point per thread and no loop, so a curve with more points than the block has threads (blocks of 16, curves of up to 32 points) keeps its last points unwritten; it must lose its points.
# naive: none
from numba import float32


@cuda.jit
def _tess(cp, counts, offsets, points):
    b = cuda.blockIdx.x
    k = cuda.threadIdx.x
    if k < counts[b]:
        u = float32(k) / float32(counts[b] - 1)
        w = float32(1.0) - u
        for c in range(2):
            points[offsets[b] + k, c] = (w * w * cp[b, 0, c] + float32(2.0) * u * w * cp[b, 1, c]
                                         + u * u * cp[b, 2, c])


def tessellate(cp, counts, points, threads):
    offsets = cuda.device_array(cp.shape[0], np.int32)
    ag.problems.ch21.exclusive_scan(counts, offsets)
    _tess[cp.shape[0], threads](cp, counts, offsets, points)
