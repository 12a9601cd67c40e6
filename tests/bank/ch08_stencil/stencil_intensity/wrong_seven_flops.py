# bank: counts 7 FLOPs per point (the multiplications only, or the number of terms) instead of 13; it must lose the points.
# naive: none
def stencil_intensity(box_x, box_y, box_z):
    return 7 * (box_x - 2) * (box_y - 2) * (box_z - 2) / (4 * box_x * box_y * box_z)
