# bank: PMPP §8.4's coarsened kernel with three shared planes (prev, curr, next), each thread moving its own entries down a plane after the second barrier; no register tiling, still correct: full marks.
# naive: none
from numba import float32

PLANE_TILE = 16
PLANE_OUT = PLANE_TILE - 2


@cuda.jit
def stencil_coarsened_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    prev = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    curr = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nxt = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nz, ny, nx = inp.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    k = cuda.blockIdx.x * PLANE_OUT + tx - 1
    j = cuda.blockIdx.y * PLANE_OUT + ty - 1
    per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
    start = cuda.blockIdx.z * per
    stop = min(start + per, nz)
    inside = 0 <= j < ny and 0 <= k < nx
    if inside and 0 < start < nz:
        prev[ty, tx] = inp[start - 1, j, k]
    if inside and start < nz:
        curr[ty, tx] = inp[start, j, k]
    for i in range(start, stop):
        if inside and i + 1 < nz:
            nxt[ty, tx] = inp[i + 1, j, k]
        cuda.syncthreads()
        if inside and 1 <= tx <= PLANE_TILE - 2 and 1 <= ty <= PLANE_TILE - 2:
            if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                out[i, j, k] = curr[ty, tx]
            else:
                out[i, j, k] = (c0 * curr[ty, tx] + c1 * curr[ty, tx - 1] + c2 * curr[ty, tx + 1]
                                + c3 * curr[ty - 1, tx] + c4 * curr[ty + 1, tx]
                                + c5 * prev[ty, tx] + c6 * nxt[ty, tx])
        cuda.syncthreads()
        prev[ty, tx] = curr[ty, tx]
        curr[ty, tx] = nxt[ty, tx]
