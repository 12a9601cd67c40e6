# bank: leaves out the 1 KB the driver reserves per block, so 46,000 bytes of shared memory seem to fit 5 blocks on an H200 (only 4 do); it must lose the points.
# naive: none
def occupancy(threads_per_block, regs_per_thread, smem_per_block, limits):
    warp = limits["warp_size"]
    w = -(-threads_per_block // warp)
    max_warps = limits["max_threads_per_sm"] // warp
    unit = limits["reg_alloc_unit"]
    regs_per_warp = -(-regs_per_thread * warp // unit) * unit
    parts = limits["sub_partitions"]
    by_regs = limits["regs_per_sm"] // parts // regs_per_warp * parts // w
    unit = limits["smem_alloc_unit"]
    smem = -(-smem_per_block // unit) * unit
    by_smem = limits["smem_per_sm"] // smem if smem else limits["max_blocks_per_sm"]
    blocks = min(max_warps // w, limits["max_blocks_per_sm"], by_regs, by_smem)
    return blocks, blocks * w / max_warps
