# bank: the coalesced layout (points a block-width apart), coarsen sums in a local array, dy² + dz² computed once per atom and reused for every point, each point stored while inside the slice; correct, full marks.
# naive: none
import math

from numba import float32

COARSEN_MAX = 8


@cuda.jit
def dcs_coarsened_kernel(atoms, V, h, z, coarsen):
    base = cuda.blockIdx.x * cuda.blockDim.x * coarsen + cuda.threadIdx.x
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
            q = atoms[a, 3]
            for k in range(coarsen):
                dx = float32(base + k * cuda.blockDim.x) * h - atoms[a, 0]
                acc[k] += q / math.sqrt(dx * dx + dyz2)
        for k in range(coarsen):
            i = base + k * cuda.blockDim.x
            if i < V.shape[1]:
                V[j, i] = acc[k]
