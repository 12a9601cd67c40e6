# bank: takes the difference pos[i] − pos[j], pushing every body away from the others instead of pulling it towards them (every acceleration has the wrong sign); it must lose the points.
# naive: none
import math

from numba import float32


@cuda.jit
def nbody_gather_kernel(pos, mass, eps2, acc):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = pos.shape[0]
    if i < n:
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for j in range(n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            r2 = dx * dx + dy * dy + dz * dz + eps2
            s = mass[j] / (r2 * math.sqrt(r2))
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
