# bank: computes each kernel's bytes per pixel, then the bound through its arithmetic intensity, min(peak, intensity × bandwidth); algebraically equal, full marks.
# naive: none
def conv_time_bounds(height, width, r, in_tile, peak_flops, bandwidth):
    k = 2 * r + 1
    flops_per_pixel = 2.0 * k * k
    halo_ratio = (in_tile / (in_tile - 2 * r)) ** 2
    result = []
    for bytes_per_pixel in (8.0 * k * k + 4, 4.0 * k * k + 4, 4.0 * halo_ratio + 4, 8.0):
        intensity = flops_per_pixel / bytes_per_pixel
        rate = min(peak_flops, intensity * bandwidth)
        result.append(flops_per_pixel * height * width / rate)
    return tuple(result)
