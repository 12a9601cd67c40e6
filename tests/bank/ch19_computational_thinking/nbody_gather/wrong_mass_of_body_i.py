# bank: multiplies every term by mass[i], the mass of the body being pulled, instead of mass[j], the body pulling it; it must lose the points.
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
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + eps2
            s = mass[i] / (r2 * math.sqrt(r2))
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
