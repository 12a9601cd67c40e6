# bank: counts 12 bytes a pair (the position of body j, not its mass) in both gathers; it must lose the points.
# naive: none
def nbody_bound(n, block, peak_flops, bandwidth):
    flops = 20 * n * n
    gather_bytes = 12 * n * n + 24 * n
    tiled_bytes = 12 * n * ((n + block - 1) // block) + 24 * n
    return (flops, gather_bytes, tiled_bytes, max(flops / peak_flops, gather_bytes / bandwidth),
            max(flops / peak_flops, tiled_bytes / bandwidth))
