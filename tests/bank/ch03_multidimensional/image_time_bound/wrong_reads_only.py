# bank: counts only the bytes read, forgetting that the output is written to memory too; it must lose the points.
# naive: none
def image_time_bound(height, width, bytes_in, bytes_out, bandwidth):
    return height * width * bytes_in / bandwidth
