# bank: the same scan and block per curve, each point by de Casteljau's construction (a lerp on each leg, then a lerp between them), the coordinates in a loop; correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def _casteljau(cp, counts, offsets, points):
    b = cuda.blockIdx.x
    k = cuda.threadIdx.x
    last = counts[b] - 1
    while k <= last:
        u = float32(k) / float32(last)
        for c in range(2):
            a = cp[b, 0, c] + u * (cp[b, 1, c] - cp[b, 0, c])
            e = cp[b, 1, c] + u * (cp[b, 2, c] - cp[b, 1, c])
            points[offsets[b] + k, c] = a + u * (e - a)
        k += cuda.blockDim.x


def tessellate(cp, counts, points, threads):
    offsets = cuda.device_array(cp.shape[0], np.int32)
    ag.problems.ch21.exclusive_scan(counts, offsets)
    _casteljau[cp.shape[0], threads](cp, counts, offsets, points)
