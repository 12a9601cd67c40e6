# bank: only the inner threads load their point, so the halo entries of the tile are never filled and the outputs on a tile's faces read garbage; it must lose the points.
# naive: none
from numba import float32

IN_TILE = 8
OUT_TILE = IN_TILE - 2


@cuda.jit
def stencil_tiled_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    k = cuda.blockIdx.x * OUT_TILE + tx - 1
    j = cuda.blockIdx.y * OUT_TILE + ty - 1
    i = cuda.blockIdx.z * OUT_TILE + tz - 1
    nz, ny, nx = inp.shape
    inside = 0 <= i < nz and 0 <= j < ny and 0 <= k < nx
    inner = 1 <= tx <= IN_TILE - 2 and 1 <= ty <= IN_TILE - 2 and 1 <= tz <= IN_TILE - 2
    if inside and inner:
        tile[tz, ty, tx] = inp[i, j, k]
    cuda.syncthreads()
    if inside and inner:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = tile[tz, ty, tx]
        else:
            out[i, j, k] = (c0 * tile[tz, ty, tx]
                            + c1 * tile[tz, ty, tx - 1] + c2 * tile[tz, ty, tx + 1]
                            + c3 * tile[tz, ty - 1, tx] + c4 * tile[tz, ty + 1, tx]
                            + c5 * tile[tz - 1, ty, tx] + c6 * tile[tz + 1, ty, tx])
