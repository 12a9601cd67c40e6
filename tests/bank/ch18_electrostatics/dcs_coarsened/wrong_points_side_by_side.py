# bank: a thread's points next to each other (columns t·coarsen + k, PMPP's first coarsened kernel): the values are right, the stores are uncoalesced, and the exercise asks for the coalesced layout; CPU mode records who stored each element, so it must lose its points there.
# naive: none
import math

from numba import float32

COARSEN_MAX = 8


@cuda.jit
def dcs_coarsened_kernel(atoms, V, h, z, coarsen):
    base = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * coarsen
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0]:
        y = float32(j) * h
        acc = cuda.local.array(COARSEN_MAX, float32)
        for k in range(coarsen):
            acc[k] = float32(0.0)
        for a in range(atoms.shape[0]):
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            dyz2 = dy * dy + dz * dz
            for k in range(coarsen):
                dx = float32(base + k) * h - atoms[a, 0]
                acc[k] += atoms[a, 3] / math.sqrt(dx * dx + dyz2)
        for k in range(coarsen):
            if base + k < V.shape[1]:
                V[j, base + k] = acc[k]
