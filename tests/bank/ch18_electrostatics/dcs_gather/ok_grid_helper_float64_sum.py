# bank: cuda.grid(2) for (column, row), an early return past the slice, the charge times the reciprocal of the distance, summed in float64 and stored as float32; correct (more precise than needed), full marks.
# naive: none
import math

from numba import float64


@cuda.jit
def dcs_gather_kernel(atoms, V, h, z):
    col, row = cuda.grid(2)
    if row >= V.shape[0] or col >= V.shape[1]:
        return
    x = float64(col) * h
    y = float64(row) * h
    total = 0.0
    for a in range(atoms.shape[0]):
        r2 = (x - atoms[a, 0]) ** 2 + (y - atoms[a, 1]) ** 2 + (z - atoms[a, 2]) ** 2
        total += atoms[a, 3] * (1.0 / math.sqrt(r2))
    V[row, col] = total
