# bank: right points, but the offsets come from a kernel in which one thread walks all the counts: on the H200 a million curves take ~60 ms (2% of the course's kernel, slower than the CPU), so it must lose the speed points.
# naive: none
# gpu-only: yes
from numba import float32


@cuda.jit
def _scan_one_thread(counts, offsets):
    if cuda.grid(1) == 0:
        run = 0
        for i in range(counts.size):
            offsets[i] = run
            run += counts[i]


@cuda.jit
def _tess(cp, counts, offsets, points):
    b = cuda.blockIdx.x
    for k in range(cuda.threadIdx.x, counts[b], cuda.blockDim.x):
        u = float32(k) / float32(counts[b] - 1)
        w = float32(1.0) - u
        for c in range(2):
            points[offsets[b] + k, c] = (w * w * cp[b, 0, c] + float32(2.0) * u * w * cp[b, 1, c]
                                         + u * u * cp[b, 2, c])


def tessellate(cp, counts, points, threads):
    offsets = cuda.device_array(cp.shape[0], np.int32)
    _scan_one_thread[1, 1](counts, offsets)
    _tess[cp.shape[0], threads](cp, counts, offsets, points)
