# bank: a thread whose block's columns run past the slice stores nothing ("the last block is partial: skip it"), so the slice's last columns are never written whenever the width is not a multiple of blockDim.x · coarsen; it must lose its points.
# naive: none
import math

from numba import float32

COARSEN_MAX = 8


@cuda.jit
def dcs_coarsened_kernel(atoms, V, h, z, coarsen):
    span = cuda.blockDim.x * coarsen
    base = cuda.blockIdx.x * span + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0] and (cuda.blockIdx.x + 1) * span <= V.shape[1]:
        y = float32(j) * h
        acc = cuda.local.array(COARSEN_MAX, float32)
        for k in range(coarsen):
            acc[k] = float32(0.0)
        for a in range(atoms.shape[0]):
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            dyz2 = dy * dy + dz * dz
            for k in range(coarsen):
                dx = float32(base + k * cuda.blockDim.x) * h - atoms[a, 0]
                acc[k] += atoms[a, 3] / math.sqrt(dx * dx + dyz2)
        for k in range(coarsen):
            V[j, base + k * cuda.blockDim.x] = acc[k]
