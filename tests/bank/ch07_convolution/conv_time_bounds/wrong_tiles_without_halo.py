# bank: counts one load per output pixel for the tiled kernel (in_tile² / in_tile², forgetting that the halo is loaded but produces no output), so its bound equals the ideal one; it must lose the points.
# naive: none
def conv_time_bounds(height, width, r, in_tile, peak_flops, bandwidth):
    taps = (2 * r + 1) ** 2
    pixels = height * width
    compute = 2 * taps * pixels / peak_flops
    per_pixel = (4 * (2 * taps + 1), 4 * (taps + 1), 4 * (in_tile ** 2 / in_tile ** 2 + 1), 8)
    return tuple(max(compute, q * pixels / bandwidth) for q in per_pixel)
