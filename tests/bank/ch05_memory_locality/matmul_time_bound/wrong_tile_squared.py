# bank: divides the traffic by TILE² (a tile holds TILE² elements) instead of TILE; too optimistic whenever memory bound; it must lose the points.
# naive: none
def matmul_time_bound(m, k, n, tile, peak_flops, bandwidth):
    traffic = 4 * (2 * m * k * n / tile ** 2 + m * n)
    return max(2 * m * k * n / peak_flops, traffic / bandwidth)
