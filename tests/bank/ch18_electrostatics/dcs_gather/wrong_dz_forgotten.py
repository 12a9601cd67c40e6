# bank: measures the distance in the plane only (dx² + dy², no dz²): every term too large, so it must lose its points.
# naive: none
import math

from numba import float32


@cuda.jit
def dcs_gather_kernel(atoms, V, h, z):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0] and i < V.shape[1]:
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = float32(i) * h - atoms[a, 0]
            dy = float32(j) * h - atoms[a, 1]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + float32(1e-12))
        V[j, i] = acc
