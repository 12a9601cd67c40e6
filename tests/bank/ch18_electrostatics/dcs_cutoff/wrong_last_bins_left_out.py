# bank: visits bin rows and columns with range(lo, hi) instead of range(lo, hi + 1): the bins holding x + cutoff and y + cutoff are never visited, and the atoms within the cutoff there are left out; it must lose its points.
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
        for by in range(by_lo, by_hi):
            for bx in range(bx_lo, bx_hi):
                for a in range(bin_start[by, bx], bin_start[by, bx + 1]):
                    dx = x - atoms[a, 0]
                    dy = y - atoms[a, 1]
                    dz = z - atoms[a, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < cutoff * cutoff:
                        acc += atoms[a, 3] / math.sqrt(r2)
        V[j, i] = acc
