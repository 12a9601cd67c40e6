# bank: loads body start + t without asking whether it exists, so in the last, partial tile the threads past the end read beyond pos and mass (values it never sums: right answers, but CPU mode's index check stops it, and on a GPU the checks' fenced inputs fault); it must lose the points.
# naive: none
import math

from numba import float32

TILE_MAX = 256


@cuda.jit
def nbody_tiled_kernel(pos, mass, eps2, acc):
    sx = cuda.shared.array(TILE_MAX, float32)
    sy = cuda.shared.array(TILE_MAX, float32)
    sz = cuda.shared.array(TILE_MAX, float32)
    sm = cuda.shared.array(TILE_MAX, float32)
    t = cuda.threadIdx.x
    width = cuda.blockDim.x
    i = cuda.blockIdx.x * width + t
    n = pos.shape[0]
    me = min(i, n - 1)
    xi, yi, zi = pos[me, 0], pos[me, 1], pos[me, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(0, n, width):
        j = start + t
        sx[t] = pos[j, 0]
        sy[t] = pos[j, 1]
        sz[t] = pos[j, 2]
        sm[t] = mass[j]
        cuda.syncthreads()
        for k in range(min(width, n - start)):
            dx = sx[k] - xi
            dy = sy[k] - yi
            dz = sz[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            s = sm[k] / (r2 * math.sqrt(r2))
            ax += dx * s
            ay += dy * s
            az += dz * s
        cuda.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
