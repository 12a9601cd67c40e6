# bank: divides the whole span of the warp's bytes by 32, as if every sector in between were moved; right for small strides, far too many for a column (stride 148); it must lose the points.
# naive: none
def sectors_per_warp(stride_bytes, elem_bytes):
    span = 31 * stride_bytes + elem_bytes
    return (span + 31) // 32
