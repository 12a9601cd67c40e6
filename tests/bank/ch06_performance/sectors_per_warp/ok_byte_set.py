# bank: the sector of every byte of every thread's value, collected in a set comprehension; correct, full marks.
# naive: none
def sectors_per_warp(stride_bytes, elem_bytes):
    return len({(t * stride_bytes + b) // 32 for t in range(32) for b in range(elem_bytes)})
