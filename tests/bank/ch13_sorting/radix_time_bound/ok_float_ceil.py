# bank: the model with math.ceil on float divisions and the table's five trips written out term by term; correct (within float64 roundings), full marks.
# naive: none
import math


def radix_time_bound(n, bits, tile, bandwidth):
    passes = math.ceil(32 / bits)
    tiles = math.ceil(n / tile)
    counters = 2 ** bits * tiles
    keys_and_values = 4 * (2 * n) * 2 * 2          # 8 bytes a pair, read + write, two kernels
    table = 4 * counters * (1 + 1 + 1 + 2)         # local sort writes; scan reads, writes; scatter reads two
    return passes * (keys_and_values + table) / bandwidth
