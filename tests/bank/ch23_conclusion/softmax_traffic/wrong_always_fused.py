# bank: assumes every row fits on chip (no fallback), which is right for the short rows of most tests; it must lose the points.
# naive: none
def softmax_traffic(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    matrix = rows * cols * elem_bytes
    return 4 * matrix, 3 * matrix, 2 * matrix, 2 * matrix / bandwidth
