# bank: counts the filter loads in the constant-memory kernel too (its bytes are the basic kernel's), so the constant bound is twice too large; it must lose the points.
# naive: none
def conv_time_bounds(height, width, r, in_tile, peak_flops, bandwidth):
    taps = (2 * r + 1) ** 2
    pixels = height * width
    out_tile = in_tile - 2 * r
    compute = 2 * taps * pixels / peak_flops
    per_pixel = (4 * (2 * taps + 1), 4 * (2 * taps + 1), 4 * (in_tile ** 2 / out_tile ** 2 + 1), 8)
    return tuple(max(compute, q * pixels / bandwidth) for q in per_pixel)
