# bank: guards the loads of the last tile but then sums all blockDim.x entries of it, adding again the bodies the previous tile left in the unfilled slots; it must lose the points.
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
        if j < n:
            sx[t] = pos[j, 0]
            sy[t] = pos[j, 1]
            sz[t] = pos[j, 2]
            sm[t] = mass[j]
        cuda.syncthreads()
        for k in range(width):
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
