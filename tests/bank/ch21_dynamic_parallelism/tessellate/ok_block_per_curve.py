# bank: the course's scan into offsets, then a block per curve whose threads stride over its points with the three Bernstein weights; correct, full marks.
# naive: none
from numba import float32


@cuda.jit
def tessellate_kernel(cp, counts, offsets, points):
    b = cuda.blockIdx.x
    count = counts[b]
    start = offsets[b]
    for k in range(cuda.threadIdx.x, count, cuda.blockDim.x):
        u = float32(k) / float32(count - 1)
        w = float32(1.0) - u
        b0, b1, b2 = w * w, float32(2.0) * u * w, u * u
        points[start + k, 0] = b0 * cp[b, 0, 0] + b1 * cp[b, 1, 0] + b2 * cp[b, 2, 0]
        points[start + k, 1] = b0 * cp[b, 0, 1] + b1 * cp[b, 1, 1] + b2 * cp[b, 2, 1]


def tessellate(cp, counts, points, threads):
    n = cp.shape[0]
    offsets = cuda.device_array(n, np.int32)
    ag.problems.ch21.exclusive_scan(counts, offsets)
    tessellate_kernel[n, threads](cp, counts, offsets, points)
