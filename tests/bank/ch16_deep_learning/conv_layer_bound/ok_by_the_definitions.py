# bank: the output's sizes first, then FLOPs, the least bytes, the unrolled matrix's two passes and the larger of the two times; correct, full marks.
# naive: none
def conv_layer_bound(n, c, h, w, m, r, s, peak_flops, bandwidth):
    p, q = h - r + 1, w - s + 1
    flops = 2 * n * m * p * q * c * r * s
    least = 4 * (n * c * h * w + m * c * r * s + n * m * p * q)
    unrolled = 4 * c * r * s * n * p * q
    return flops, least, least + 2 * unrolled, max(flops / peak_flops, least / bandwidth)
