# bank: the bound through the arithmetic intensity, FLOPs over the attainable rate min(peak, intensity × bandwidth), in floats; algebraically equal, full marks.
# naive: none
def conv_layer_bound(n, c, h, w, m, r, s, peak_flops, bandwidth):
    outputs = float(n * m * (h - r + 1) * (w - s + 1))
    flops = 2.0 * c * r * s * outputs
    elements = float(n * c * h * w) + float(m * c * r * s) + outputs
    least = 4.0 * elements
    im2col = least + 8.0 * (c * r * s) * (outputs / m)
    rate = min(peak_flops, flops / least * bandwidth)
    return flops, least, im2col, flops / rate
