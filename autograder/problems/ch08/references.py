"""Chapter 8's reference kernels: the course's own stencils (what the exercises' ``reference=``
points at, timed beside every speed test) and the other kernels ``aag bench`` times beside the
coarsened exercise's reference (``BENCH_VARIANTS``). The tile sizes they are written for are
defined here; the exercises take them from this module."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

# 8.3: the input tile is IN_TILE³ points (the block), its inner OUT_TILE³ points are outputs.
IN_TILE = 8
OUT_TILE = IN_TILE - 2
# 8.4: the block is a PLANE_TILE × PLANE_TILE input tile of one z plane; it marches along z.
PLANE_TILE = 16
PLANE_OUT = PLANE_TILE - 2

cuda = float32 = None            # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def reference_coarsened():
    """The course's z-marching kernel, launched like Exercise 8.4 (PLANE_TILE² threads per block,
    the grid's z splitting the volume into slabs). Register tiling (the planes below and above
    in registers, only the current one in shared memory), loads clamped into the volume (no
    branches around them: halo values outside are never used, since the points next to them are
    boundary points), and the loads issued four planes ahead, unrolled by hand so that no
    register holding a load in flight is copied: up to four loads per thread are in flight while
    the block computes, instead of one."""
    T, O = PLANE_TILE, PLANE_OUT

    @cuda.jit(device=True)
    def plane(s, inp, out, i, j, k, tx, ty, below, here, above, writes,
              c0, c1, c2, c3, c4, c5, c6):
        s[ty, tx] = here
        cuda.syncthreads()
        nz, ny, nx = inp.shape
        if writes:
            if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                out[i, j, k] = here
            else:
                out[i, j, k] = (c0 * here + c1 * s[ty, tx - 1] + c2 * s[ty, tx + 1]
                                + c3 * s[ty - 1, tx] + c4 * s[ty + 1, tx]
                                + c5 * below + c6 * above)
        cuda.syncthreads()

    @cuda.jit
    def stencil_reference(inp, out, c0, c1, c2, c3, c4, c5, c6):
        s = cuda.shared.array((T, T), float32)
        nz, ny, nx = inp.shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        k = cuda.blockIdx.x * O + tx - 1
        j = cuda.blockIdx.y * O + ty - 1
        per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
        start = cuda.blockIdx.z * per
        stop = min(start + per, nz)
        if start >= stop:           # an empty slab: the whole block leaves together
            return
        kk = min(max(k, 0), nx - 1)
        jj = min(max(j, 0), ny - 1)
        writes = 1 <= tx <= T - 2 and 1 <= ty <= T - 2 and j < ny and k < nx
        last = min(stop, nz - 1)    # the highest plane this slab reads
        below = inp[max(start - 1, 0), jj, kk]
        a0 = inp[start, jj, kk]
        a1 = inp[min(start + 1, last), jj, kk]
        a2 = inp[min(start + 2, last), jj, kk]
        a3 = inp[min(start + 3, last), jj, kk]
        i = start
        while i < stop:
            # Planes i + 4 .. i + 7, in flight while planes i .. i + 3 are computed.
            b0 = inp[i + 4, jj, kk] if i + 4 <= last else float32(0)
            b1 = inp[i + 5, jj, kk] if i + 5 <= last else float32(0)
            b2 = inp[i + 6, jj, kk] if i + 6 <= last else float32(0)
            b3 = inp[i + 7, jj, kk] if i + 7 <= last else float32(0)
            plane(s, inp, out, i, j, k, tx, ty, below, a0, a1, writes,
                  c0, c1, c2, c3, c4, c5, c6)
            if i + 1 < stop:
                plane(s, inp, out, i + 1, j, k, tx, ty, a0, a1, a2, writes,
                      c0, c1, c2, c3, c4, c5, c6)
            if i + 2 < stop:
                plane(s, inp, out, i + 2, j, k, tx, ty, a1, a2, a3, writes,
                      c0, c1, c2, c3, c4, c5, c6)
            if i + 3 < stop:
                plane(s, inp, out, i + 3, j, k, tx, ty, a2, a3, b0, writes,
                      c0, c1, c2, c3, c4, c5, c6)
            below, a0, a1, a2, a3 = a3, b0, b1, b2, b3
            i += 4
    return stencil_reference


@_kernels.lazy
def reference_register_tiled():
    """The plain register-tiled kernel (one load in flight per thread): what Exercise 8.4's
    solution looks like, kept here so that ``aag bench`` and the GPU tests can compare it with
    the reference."""
    T, O = PLANE_TILE, PLANE_OUT

    @cuda.jit
    def stencil_register_tiled(inp, out, c0, c1, c2, c3, c4, c5, c6):
        s = cuda.shared.array((T, T), float32)
        nz, ny, nx = inp.shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        k = cuda.blockIdx.x * O + tx - 1
        j = cuda.blockIdx.y * O + ty - 1
        per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
        start = cuda.blockIdx.z * per
        stop = min(start + per, nz)
        inside = 0 <= j < ny and 0 <= k < nx
        below = float32(0)
        here = float32(0)
        if inside and start < stop:
            here = inp[start, j, k]
            if start > 0:
                below = inp[start - 1, j, k]
        for i in range(start, stop):
            above = float32(0)
            if inside and i + 1 < nz:
                above = inp[i + 1, j, k]
            s[ty, tx] = here
            cuda.syncthreads()
            if inside and 1 <= tx <= T - 2 and 1 <= ty <= T - 2:
                if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                    out[i, j, k] = here
                else:
                    out[i, j, k] = (c0 * here + c1 * s[ty, tx - 1] + c2 * s[ty, tx + 1]
                                    + c3 * s[ty - 1, tx] + c4 * s[ty + 1, tx]
                                    + c5 * below + c6 * above)
            cuda.syncthreads()
            below = here
            here = above
    return stencil_register_tiled


@_kernels.lazy
def reference_tiled():
    """PMPP §8.3's 3-D tile (the shape of Exercise 8.3), for `aag bench` and the notebook's
    comparison on a GPU."""
    T, O = IN_TILE, OUT_TILE

    @cuda.jit
    def stencil_tiled_reference(inp, out, c0, c1, c2, c3, c4, c5, c6):
        tile = cuda.shared.array((T, T, T), float32)
        tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
        nz, ny, nx = inp.shape
        k = cuda.blockIdx.x * O + tx - 1
        j = cuda.blockIdx.y * O + ty - 1
        i = cuda.blockIdx.z * O + tz - 1
        inside = 0 <= i < nz and 0 <= j < ny and 0 <= k < nx
        if inside:
            tile[tz, ty, tx] = inp[i, j, k]
        cuda.syncthreads()
        if inside and 1 <= tx <= T - 2 and 1 <= ty <= T - 2 and 1 <= tz <= T - 2:
            if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
                out[i, j, k] = tile[tz, ty, tx]
            else:
                out[i, j, k] = (c0 * tile[tz, ty, tx] + c1 * tile[tz, ty, tx - 1]
                                + c2 * tile[tz, ty, tx + 1] + c3 * tile[tz, ty - 1, tx]
                                + c4 * tile[tz, ty + 1, tx] + c5 * tile[tz - 1, ty, tx]
                                + c6 * tile[tz + 1, ty, tx])
    return stencil_tiled_reference


@_kernels.lazy
def reference_three_planes():
    """PMPP §8.4's z-marching kernel with three shared planes and no register tiling (launched
    like Exercise 8.4), for `aag bench`."""
    T, O = PLANE_TILE, PLANE_OUT

    @cuda.jit
    def stencil_three_planes(inp, out, c0, c1, c2, c3, c4, c5, c6):
        prev = cuda.shared.array((T, T), float32)
        curr = cuda.shared.array((T, T), float32)
        nxt = cuda.shared.array((T, T), float32)
        nz, ny, nx = inp.shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        k = cuda.blockIdx.x * O + tx - 1
        j = cuda.blockIdx.y * O + ty - 1
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
            if inside and 1 <= tx <= T - 2 and 1 <= ty <= T - 2:
                if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                    out[i, j, k] = curr[ty, tx]
                else:
                    out[i, j, k] = (c0 * curr[ty, tx] + c1 * curr[ty, tx - 1]
                                    + c2 * curr[ty, tx + 1] + c3 * curr[ty - 1, tx]
                                    + c4 * curr[ty + 1, tx] + c5 * prev[ty, tx]
                                    + c6 * nxt[ty, tx])
            cuda.syncthreads()
            prev[ty, tx] = curr[ty, tx]
            curr[ty, tx] = nxt[ty, tx]
    return stencil_three_planes


@_kernels.lazy
def reference_basic():
    """One thread per point (the shape of Exercise 8.1), for comparisons on a GPU."""
    @cuda.jit
    def stencil_basic_reference(inp, out, c0, c1, c2, c3, c4, c5, c6):
        k, j, i = cuda.grid(3)
        nz, ny, nx = inp.shape
        if i < nz and j < ny and k < nx:
            if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
                out[i, j, k] = inp[i, j, k]
            else:
                out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, k - 1]
                                + c2 * inp[i, j, k + 1] + c3 * inp[i, j - 1, k]
                                + c4 * inp[i, j + 1, k] + c5 * inp[i - 1, j, k]
                                + c6 * inp[i + 1, j, k])
    return stencil_basic_reference
