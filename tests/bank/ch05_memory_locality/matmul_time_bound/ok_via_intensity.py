# bank: the roofline form, FLOPs divided by min(peak, intensity × bandwidth); algebraically equal, full marks.
# naive: none
def matmul_time_bound(m, k, n, tile, peak_flops, bandwidth):
    flops = 2.0 * m * k * n
    intensity = flops / (4.0 * (2.0 * m * k * n / tile + m * n))
    return flops / min(peak_flops, intensity * bandwidth)
