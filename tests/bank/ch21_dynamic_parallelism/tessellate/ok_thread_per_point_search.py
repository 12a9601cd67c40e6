# bank: a thread per point instead of a block per curve: after the scan, each thread finds its curve with a binary search over the offsets and evaluates the power form of the polynomial; correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def _per_point(cp, counts, offsets, points):
    p = cuda.grid(1)
    if p < points.shape[0]:
        lo = 0
        hi = cp.shape[0] - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if offsets[mid] <= p:
                lo = mid
            else:
                hi = mid - 1
        u = float32(p - offsets[lo]) / float32(counts[lo] - 1)
        for c in range(2):
            p0, p1, p2 = cp[lo, 0, c], cp[lo, 1, c], cp[lo, 2, c]
            points[p, c] = p0 + float32(2.0) * u * (p1 - p0) + u * u * (p0 - float32(2.0) * p1 + p2)


def tessellate(cp, counts, points, threads):
    offsets = cuda.device_array(cp.shape[0], np.int32)
    ag.problems.ch21.exclusive_scan(counts, offsets)
    total = points.shape[0]
    _per_point[(total + threads - 1) // threads, threads](cp, counts, offsets, points)
