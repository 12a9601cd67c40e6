# bank: every thread loads a point clamped into the volume (no branch around the load; halo values outside are never used), halo threads return after the barrier; np.float32 tile; correct, full marks.
# naive: none
IN_TILE = 8
OUT_TILE = IN_TILE - 2


@cuda.jit
def stencil_tiled_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), np.float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    nz, ny, nx = inp.shape
    k = cuda.blockIdx.x * OUT_TILE + tx - 1
    j = cuda.blockIdx.y * OUT_TILE + ty - 1
    i = cuda.blockIdx.z * OUT_TILE + tz - 1
    tile[tz, ty, tx] = inp[min(max(i, 0), nz - 1), min(max(j, 0), ny - 1), min(max(k, 0), nx - 1)]
    cuda.syncthreads()
    if tx == 0 or ty == 0 or tz == 0 or tx == IN_TILE - 1 or ty == IN_TILE - 1 or tz == IN_TILE - 1:
        return
    if i >= nz or j >= ny or k >= nx:
        return
    v = tile[tz, ty, tx]
    if 0 < i < nz - 1 and 0 < j < ny - 1 and 0 < k < nx - 1:
        v = (c0 * v + c1 * tile[tz, ty, tx - 1] + c2 * tile[tz, ty, tx + 1]
             + c3 * tile[tz, ty - 1, tx] + c4 * tile[tz, ty + 1, tx]
             + c5 * tile[tz - 1, ty, tx] + c6 * tile[tz + 1, ty, tx])
    out[i, j, k] = v
