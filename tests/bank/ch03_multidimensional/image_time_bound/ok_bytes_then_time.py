# bank: the bytes per pixel added first, then pixels times bytes over the bandwidth; correct, full marks.
# naive: none
def image_time_bound(height, width, bytes_in, bytes_out, bandwidth):
    per_pixel = bytes_in + bytes_out
    total = height * width * per_pixel
    return total / bandwidth
