# bank: the coalesced layout with the loops the other way round: for each of its points (a block-width apart) the thread sums every atom and stores, stopping at the first column past the slice; no reuse of dy² + dz², but right, full marks.
# naive: none
import math

from numba import float32


@cuda.jit
def dcs_coarsened_kernel(atoms, V, h, z, coarsen):
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j >= V.shape[0]:
        return
    first = cuda.blockIdx.x * cuda.blockDim.x * coarsen + cuda.threadIdx.x
    for k in range(coarsen):
        i = first + k * cuda.blockDim.x
        if i >= V.shape[1]:
            break
        total = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = float32(i) * h - atoms[a, 0]
            dy = float32(j) * h - atoms[a, 1]
            dz = z - atoms[a, 2]
            total += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        V[j, i] = total
