# bank: divides the charge by r² instead of r (the field's fall-off, not the potential's), so it must lose its points.
# naive: none
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
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / (dx * dx + dy * dy + dz * dz)
        V[j, i] = acc
