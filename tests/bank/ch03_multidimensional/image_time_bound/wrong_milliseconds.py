# bank: the right formula returned in milliseconds instead of seconds; it must lose the points.
# naive: none
def image_time_bound(height, width, bytes_in, bytes_out, bandwidth):
    return 1e3 * height * width * (bytes_in + bytes_out) / bandwidth
