# bank: counts bins first (2·cutoff / bin_size + 1 per axis), then atoms per bin; the same numbers another way, full marks.
# naive: none
import math


def binned_work(nx, ny, h, atoms, cutoff, bin_size):
    per_axis = 2 * cutoff / bin_size + 1
    atoms_per_bin = atoms * bin_size ** 2 / ((nx * h) * (ny * h))
    visited_per_point = per_axis ** 2 * atoms_per_bin
    useful = math.pi * cutoff ** 2 / (per_axis * bin_size) ** 2
    return nx * ny * atoms, nx * ny * visited_per_point, useful
