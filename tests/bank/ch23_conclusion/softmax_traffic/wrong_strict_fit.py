# bank: a row fits only when strictly smaller than the chip's bytes, so a row exactly as long as the chip holds falls back; it must lose the points.
# naive: none
def softmax_traffic(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    matrix = rows * cols * elem_bytes
    fused = 2 * matrix if cols * elem_bytes < on_chip_bytes else 3 * matrix
    return 4 * matrix, 3 * matrix, fused, fused / bandwidth
