# bank: takes the slice's area as (nx − 1)·h by (ny − 1)·h, the span of its points, not nx·h by ny·h as the exercise defines it; pairs_binned is off by a fraction of a percent or more, so it must lose its points.
# naive: none
import math


def binned_work(nx, ny, h, atoms, cutoff, bin_size):
    full = nx * ny * atoms
    side = 2 * cutoff + bin_size
    density = atoms / ((nx - 1) * h * (ny - 1) * h)
    return full, nx * ny * density * side * side, math.pi * cutoff ** 2 / side ** 2
