# bank: counts the tiles with n // tile instead of rounding up, so a partial last tile is forgotten (4097 elements in tiles of 4096 count as one tile, a single level); it must lose the points.
# naive: none
def scan_traffic(n, tile):
    blocks = n // tile
    level = 4 * (2 * n + blocks)
    if blocks <= 1:
        return level
    return 2 * level + scan_traffic(blocks, tile)
