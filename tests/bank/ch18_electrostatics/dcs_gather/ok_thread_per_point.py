# bank: one thread per grid point, its position in float32, a float32 sum over every atom, one store; correct, full marks.
# naive: none
import math

from numba import float32


@cuda.jit
def dcs_gather_kernel(atoms, V, h, z):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0] and i < V.shape[1]:
        x = float32(i) * h
        y = float32(j) * h
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = x - atoms[a, 0]
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        V[j, i] = acc
