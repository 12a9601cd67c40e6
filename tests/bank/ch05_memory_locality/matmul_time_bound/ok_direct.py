# bank: FLOPs and bytes counted as in the text, the larger of the two times; correct, full marks.
# naive: none
def matmul_time_bound(m, k, n, tile, peak_flops, bandwidth):
    flops = 2 * m * k * n
    traffic = 4 * (m * k * n / tile + k * n * m / tile + m * n)
    return max(flops / peak_flops, traffic / bandwidth)
