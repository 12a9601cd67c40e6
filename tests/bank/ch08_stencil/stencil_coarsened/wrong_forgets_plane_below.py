# bank: register tiling that starts every slab with below = 0 instead of loading plane start - 1, so the first plane of every slab after the first is wrong (right when the grid has one slab, as a one-block test would have it); it must lose the points.
# naive: allclose
from numba import float32

PLANE_TILE = 16
PLANE_OUT = PLANE_TILE - 2


@cuda.jit
def stencil_coarsened_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    plane = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nz, ny, nx = inp.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    k = cuda.blockIdx.x * PLANE_OUT + tx - 1
    j = cuda.blockIdx.y * PLANE_OUT + ty - 1
    per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
    start = cuda.blockIdx.z * per
    stop = min(start + per, nz)
    inside = 0 <= j < ny and 0 <= k < nx
    below = float32(0)
    here = float32(0)
    if inside and start < stop:
        here = inp[start, j, k]
    for i in range(start, stop):
        above = float32(0)
        if inside and i + 1 < nz:
            above = inp[i + 1, j, k]
        plane[ty, tx] = here
        cuda.syncthreads()
        if inside and 1 <= tx <= PLANE_TILE - 2 and 1 <= ty <= PLANE_TILE - 2:
            if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                out[i, j, k] = here
            else:
                out[i, j, k] = (c0 * here + c1 * plane[ty, tx - 1] + c2 * plane[ty, tx + 1]
                                + c3 * plane[ty - 1, tx] + c4 * plane[ty + 1, tx]
                                + c5 * below + c6 * above)
        cuda.syncthreads()
        below = here
        here = above
