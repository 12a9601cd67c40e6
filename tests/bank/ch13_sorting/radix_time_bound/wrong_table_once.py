# bank: counts the count table once per pass (only the local sort's write), leaving out the scan's and the scatter's trips over it: right when the table is negligible, wrong when it is not (many bits, small tiles); it must lose the points.
# naive: none
def radix_time_bound(n, bits, tile, bandwidth):
    passes = -(-32 // bits)
    tiles = -(-n // tile)
    return passes * (32 * n + 4 * (1 << bits) * tiles) / bandwidth
