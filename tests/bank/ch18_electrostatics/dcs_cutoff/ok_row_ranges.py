# bank: the bins within reach in x and y (both ends included, clipped), each bin row's bins taken as one range of atoms, r² tested against cutoff² before the square root; correct, full marks.
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
        nby = bin_start.shape[0]
        nbx = bin_start.shape[1] - 1
        bx_lo = max(int(math.floor((x - cutoff) / bin_size)), 0)
        bx_hi = min(int(math.floor((x + cutoff) / bin_size)), nbx - 1)
        by_lo = max(int(math.floor((y - cutoff) / bin_size)), 0)
        by_hi = min(int(math.floor((y + cutoff) / bin_size)), nby - 1)
        c2 = cutoff * cutoff
        acc = float32(0.0)
        for by in range(by_lo, by_hi + 1):
            for a in range(bin_start[by, bx_lo], bin_start[by, bx_hi + 1]):
                dx = x - atoms[a, 0]
                dy = y - atoms[a, 1]
                dz = z - atoms[a, 2]
                r2 = dx * dx + dy * dy + dz * dz
                if r2 < c2:
                    acc += atoms[a, 3] / math.sqrt(r2)
        V[j, i] = acc
