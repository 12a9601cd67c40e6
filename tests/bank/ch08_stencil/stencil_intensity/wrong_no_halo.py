# bank: forgets the halo (every loaded point is an output), so it always returns the limit 13/4; it must lose the points.
# naive: none
def stencil_intensity(box_x, box_y, box_z):
    return 13 * box_x * box_y * box_z / (4 * box_x * box_y * box_z)
