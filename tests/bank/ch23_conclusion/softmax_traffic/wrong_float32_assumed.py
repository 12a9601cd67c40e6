# bank: counts 4 bytes a value whatever elem_bytes says (fp16 inputs counted as fp32); it must lose the points.
# naive: none
def softmax_traffic(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    matrix = rows * cols * 4
    fused = 2 * matrix if cols * 4 <= on_chip_bytes else 3 * matrix
    return 4 * matrix, 3 * matrix, fused, fused / bandwidth
