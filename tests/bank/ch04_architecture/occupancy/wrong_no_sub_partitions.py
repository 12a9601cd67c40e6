# bank: divides the whole register file by the registers per warp, ignoring that warps fit whole into each of the sub-partitions (25 blocks of 64 threads at 40 registers on an H200, not 24); it must lose the points.
# naive: none
def occupancy(threads_per_block, regs_per_thread, smem_per_block, limits):
    warp = limits["warp_size"]
    w = -(-threads_per_block // warp)
    max_warps = limits["max_threads_per_sm"] // warp
    unit = limits["reg_alloc_unit"]
    regs_per_warp = -(-regs_per_thread * warp // unit) * unit
    by_regs = limits["regs_per_sm"] // regs_per_warp // w
    unit = limits["smem_alloc_unit"]
    smem = -(-(smem_per_block + limits["smem_reserved_per_block"]) // unit) * unit
    by_smem = limits["smem_per_sm"] // smem if smem else limits["max_blocks_per_sm"]
    blocks = min(max_warps // w, limits["max_blocks_per_sm"], by_regs, by_smem)
    return blocks, blocks * w / max_warps
