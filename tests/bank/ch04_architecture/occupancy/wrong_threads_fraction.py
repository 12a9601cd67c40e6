# bank: the right blocks, but the occupancy as resident threads over the SM's thread limit, so a partial warp counts as partly filled (100 threads: 78%, not 100%); it must lose the points.
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
    smem = -(-(smem_per_block + limits["smem_reserved_per_block"]) // unit) * unit
    by_smem = limits["smem_per_sm"] // smem if smem else limits["max_blocks_per_sm"]
    blocks = min(max_warps // w, limits["max_blocks_per_sm"], by_regs, by_smem)
    return blocks, blocks * threads_per_block / limits["max_threads_per_sm"]
