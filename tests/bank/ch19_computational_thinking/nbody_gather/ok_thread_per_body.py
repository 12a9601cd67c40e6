# bank: one thread per body, its position read once, every body's pull summed in three float32 registers through one over the square root cubed, three stores; correct, full marks.
# naive: none
import math

from numba import float32


@cuda.jit
def nbody_gather_kernel(pos, mass, eps2, acc):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = pos.shape[0]
    if i < n:
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for j in range(n):
            dx = pos[j, 0] - xi
            dy = pos[j, 1] - yi
            dz = pos[j, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = float32(1.0) / math.sqrt(r2)
            s = mass[j] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
