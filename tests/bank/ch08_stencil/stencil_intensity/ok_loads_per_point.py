# bank: counts the loads per output point first (box volume over inner volume), then FLOPs per byte; algebraically equal to the direct count; correct, full marks.
# naive: none
def stencil_intensity(box_x, box_y, box_z):
    loads_per_point = (box_x * box_y * box_z) / ((box_x - 2) * (box_y - 2) * (box_z - 2))
    return 13.0 / (4.0 * loads_per_point)
