# bank: counts each pass's reads and the write separately, the fallback as the online traffic; correct, full marks.
# naive: none
def softmax_traffic(rows, cols, elem_bytes, on_chip_bytes, bandwidth):
    x = rows * cols * elem_bytes
    y = x
    three = x + x + x + y
    online = x + x + y
    row_fits = cols * elem_bytes <= on_chip_bytes
    fused = x + y if row_fits else online
    return three, online, fused, fused / bandwidth
