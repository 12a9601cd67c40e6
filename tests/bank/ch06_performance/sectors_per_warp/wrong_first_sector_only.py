# bank: counts only the sector where each thread's value starts, forgetting that a value can straddle two sectors (4-byte values 33 bytes apart); it must lose the points.
# naive: allclose
def sectors_per_warp(stride_bytes, elem_bytes):
    return len({t * stride_bytes // 32 for t in range(32)})
