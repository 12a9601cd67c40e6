# bank: tests the cutoff on the distance in the plane (dx² + dy²) but divides by the 3-D distance: atoms just inside the cutoff in x and y but beyond it in 3-D still count; it must lose its points.
# naive: none
import math

from numba import float32


@cuda.jit
def dcs_cutoff_kernel(atoms, bin_start, V, h, z, cutoff, bin_size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if j < V.shape[0] and i < V.shape[1]:
        x = float32(i) * h
        y = float32(j) * h
        bx_lo = max(int(math.floor((x - cutoff) / bin_size)), 0)
        bx_hi = min(int(math.floor((x + cutoff) / bin_size)), bin_start.shape[1] - 2)
        by_lo = max(int(math.floor((y - cutoff) / bin_size)), 0)
        by_hi = min(int(math.floor((y + cutoff) / bin_size)), bin_start.shape[0] - 1)
        acc = float32(0.0)
        for by in range(by_lo, by_hi + 1):
            for a in range(bin_start[by, bx_lo], bin_start[by, bx_hi + 1]):
                dx = x - atoms[a, 0]
                dy = y - atoms[a, 1]
                dz = z - atoms[a, 2]
                if dx * dx + dy * dy < cutoff * cutoff:
                    acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        V[j, i] = acc
