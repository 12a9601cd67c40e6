# bank: counts H × W outputs per map (as if the convolution were padded) instead of P × Q; it must lose the points.
# naive: none
def conv_layer_bound(n, c, h, w, m, r, s, peak_flops, bandwidth):
    flops = 2 * n * m * h * w * c * r * s
    least = 4 * (n * c * h * w + m * c * r * s + n * m * h * w)
    unrolled = 4 * c * r * s * n * h * w
    return flops, least, least + 2 * unrolled, max(flops / peak_flops, least / bandwidth)
