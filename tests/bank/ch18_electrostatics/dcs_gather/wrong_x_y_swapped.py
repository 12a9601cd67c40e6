# bank: puts the point at (j·h, i·h): the row's index as x and the column's as y; right only on the diagonal, so it must lose its points.
# naive: none
import math

from numba import float32


@cuda.jit
def dcs_gather_kernel(atoms, V, h, z):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0] and i < V.shape[1]:
        x = float32(j) * h
        y = float32(i) * h
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = x - atoms[a, 0]
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        V[j, i] = acc
