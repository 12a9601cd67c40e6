# bank: the full pairs, the visited square's side (2·cutoff + bin_size) squared times the atoms' density over the slice's area, and the disc's area over the square's; correct, full marks.
# naive: none
import math


def binned_work(nx, ny, h, atoms, cutoff, bin_size):
    full = nx * ny * atoms
    side = 2 * cutoff + bin_size
    density = atoms / (nx * h * ny * h)
    return full, nx * ny * density * side * side, math.pi * cutoff * cutoff / (side * side)
