# bank: counts n / block blocks, a fraction, instead of rounding up to whole blocks (the last, partial block loads every body too); it must lose the points.
# naive: none
def nbody_bound(n, block, peak_flops, bandwidth):
    flops = 20 * n * n
    gather_bytes = 16 * n * n + 24 * n
    tiled_bytes = 16 * n * (n / block) + 24 * n
    return (flops, gather_bytes, tiled_bytes, max(flops / peak_flops, gather_bytes / bandwidth),
            max(flops / peak_flops, tiled_bytes / bandwidth))
