# bank: the matrix's bytes times 4, 3 and 2 (or 3 when a row does not fit), and the time at the bandwidth; correct, full marks.
# naive: none
def softmax_traffic(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    matrix = rows * cols * elem_bytes
    fused = 2 * matrix if cols * elem_bytes <= on_chip_bytes else 3 * matrix
    return 4 * matrix, 3 * matrix, fused, fused / bandwidth
