# bank: every bin of the square within reach visited one at a time, the bin range found with integer division by the bin size, the distance r itself compared with the cutoff; correct, full marks.
# naive: none
import math

from numba import float32


@cuda.jit
def dcs_cutoff_kernel(atoms, bin_start, V, h, z, cutoff, bin_size):
    col, row = cuda.grid(2)
    if row < V.shape[0] and col < V.shape[1]:
        x = float32(col) * h
        y = float32(row) * h
        acc = float32(0.0)
        for by in range(bin_start.shape[0]):
            if (by + 1) * bin_size <= y - cutoff or by * bin_size > y + cutoff:
                continue
            for bx in range(bin_start.shape[1] - 1):
                if (bx + 1) * bin_size <= x - cutoff or bx * bin_size > x + cutoff:
                    continue
                for a in range(bin_start[by, bx], bin_start[by, bx + 1]):
                    r = math.sqrt((x - atoms[a, 0]) ** 2 + (y - atoms[a, 1]) ** 2
                                  + (z - atoms[a, 2]) ** 2)
                    if r < cutoff:
                        acc += atoms[a, 3] / r
        V[row, col] = acc
