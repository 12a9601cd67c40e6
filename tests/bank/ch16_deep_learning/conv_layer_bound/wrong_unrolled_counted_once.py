# bank: counts the unrolled matrix once (written, but not read again by the GEMM); it must lose the points.
# naive: none
def conv_layer_bound(n, c, h, w, m, r, s, peak_flops, bandwidth):
    p, q = h - r + 1, w - s + 1
    flops = 2 * n * m * p * q * c * r * s
    least = 4 * (n * c * h * w + m * c * r * s + n * m * p * q)
    unrolled = 4 * c * r * s * n * p * q
    return flops, least, least + unrolled, max(flops / peak_flops, least / bandwidth)
