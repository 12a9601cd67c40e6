# bank: 20 FLOPs a pair over N² pairs, 16 bytes a pair for the untiled gather, 16 bytes a body per block over ceil(N / block) blocks for the tiled one, 24 bytes a body of its own, and the larger of the two times for each; correct, full marks.
# naive: none
def nbody_bound(n, block, peak_flops, bandwidth):
    flops = 20 * n * n
    own = 24 * n
    gather_bytes = 16 * n * n + own
    tiled_bytes = 16 * n * ((n + block - 1) // block) + own
    return (flops, gather_bytes, tiled_bytes, max(flops / peak_flops, gather_bytes / bandwidth),
            max(flops / peak_flops, tiled_bytes / bandwidth))
