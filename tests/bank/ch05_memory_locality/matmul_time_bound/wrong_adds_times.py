# bank: adds the compute time and the memory time instead of taking the larger one (as if the two never overlapped); it must lose the points.
# naive: none
def matmul_time_bound(m, k, n, tile, peak_flops, bandwidth):
    traffic = 4 * (2 * m * k * n / tile + m * n)
    return 2 * m * k * n / peak_flops + traffic / bandwidth
