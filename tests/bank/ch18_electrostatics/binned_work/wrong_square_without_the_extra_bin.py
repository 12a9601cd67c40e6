# bank: visits a square of side 2·cutoff only, as if bins lined up with every point's reach (the "+ 1 bin per axis" left out); pairs_binned and the useful share are wrong, so it must lose its points.
# naive: none
import math


def binned_work(nx, ny, h, atoms, cutoff, bin_size):
    full = nx * ny * atoms
    density = atoms / (nx * h * ny * h)
    side = 2 * cutoff
    return full, nx * ny * density * side * side, math.pi * cutoff ** 2 / side ** 2
