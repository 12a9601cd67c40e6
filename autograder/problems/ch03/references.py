"""Chapter 3's reference kernels (timed beside the learner's, and by ``aag bench``), the CuPy
vendor call, and the blur variants ``aag bench`` times beside the reference."""

from __future__ import annotations

import numpy as np

from autograder.problems.kit.images import GRAY_WEIGHTS
from autograder.problems.kit.kernels import KernelCache

cuda = float32 = uint64 = None   # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "uint64")


# ---- 3.1 RGB to gray -----------------------------------------------------------------------------

@_kernels.lazy
def reference_gray():
    @cuda.jit
    def rgb_to_gray_reference(image, gray):
        col, row = cuda.grid(2)
        if row < gray.shape[0] and col < gray.shape[1]:
            gray[row, col] = (float32(0.299) * image[row, col, 0]
                              + float32(0.587) * image[row, col, 1]
                              + float32(0.114) * image[row, col, 2])
    return rgb_to_gray_reference


def cupy_gray():
    import cupy as cp
    weights = cp.asarray(np.asarray(GRAY_WEIGHTS, np.float32))

    def run(inputs, outputs):
        cp.matmul(cp.asarray(inputs["image"]), weights, out=cp.asarray(outputs["gray"]))
    return run


# ---- 3.2 box blur --------------------------------------------------------------------------------

@_kernels.lazy
def reference_blur():
    @cuda.jit
    def blur_reference(image, out, radius):
        col, row = cuda.grid(2)
        h, w = image.shape
        if row < h and col < w:
            r0, r1 = max(row - radius, 0), min(row + radius + 1, h)
            c0, c1 = max(col - radius, 0), min(col + radius + 1, w)
            total = float32(0)
            for r in range(r0, r1):
                for c in range(c0, c1):
                    total += image[r, c]
            out[row, col] = total / float32((r1 - r0) * (c1 - c0))
    return blur_reference


class _ByRadius:
    """A launchable that compiles one kernel per radius (the radius a compile-time constant).
    ``grid(image_shape) -> (blocks, threads)``, if given, replaces the launch's own shape (for
    kernels where a thread handles several pixels)."""

    def __init__(self, make, grid=None):
        self.make, self.grid, self.kernels = make, grid, {}

    def __getitem__(self, config):
        def launch(image, out, radius):
            radius = int(radius)
            if radius not in self.kernels:
                self.kernels[radius] = self.make(radius)
            shape = self.grid(image.shape) if self.grid else config
            self.kernels[radius][shape](image, out, radius)
        return launch


@_kernels.lazy
def blur_fixed_radius():
    """For `aag bench`: the blur with the radius fixed when the kernel is compiled, so that the
    window loops are unrolled, and no clamping for pixels whose window lies inside the image."""
    def make(R):
        D = 2 * R + 1
        INV = 1.0 / (D * D)

        @cuda.jit
        def blur_unrolled(image, out, radius):
            col, row = cuda.grid(2)
            h, w = image.shape
            if row < h and col < w:
                total = float32(0)
                if R <= row < h - R and R <= col < w - R:
                    for dr in range(D):
                        for dc in range(D):
                            total += image[row - R + dr, col - R + dc]
                    out[row, col] = total * float32(INV)
                else:
                    r0, r1 = max(row - R, 0), min(row + R + 1, h)
                    c0, c1 = max(col - R, 0), min(col + R + 1, w)
                    for r in range(r0, r1):
                        for c in range(c0, c1):
                            total += image[r, c]
                    out[row, col] = total / float32((r1 - r0) * (c1 - c0))
        return blur_unrolled
    return _ByRadius(make)


def blur_sliding_rows(rows: int = 8):
    """For `aag bench`: each thread blurs `rows` pixels down one column. It sums each of the
    rows + 2r input rows across the window once (2r + 1 loads), then every output is the sum of
    2r + 1 of those row sums: about (rows + 2r)(2r + 1) / rows loads per pixel instead of
    (2r + 1)². Pixels whose window leaves the image take the plain path."""
    def make(R):
        D, NR = 2 * R + 1, rows + 2 * R
        INV = 1.0 / (D * D)

        @cuda.jit
        def blur_sliding(image, out, radius):
            col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * rows
            h, w = image.shape
            if col >= w or row0 >= h:
                return
            if R <= row0 and row0 + rows + R <= h and R <= col < w - R:
                sums = cuda.local.array(NR, float32)
                for i in range(NR):
                    s = float32(0)
                    for dc in range(D):
                        s += image[row0 - R + i, col - R + dc]
                    sums[i] = s
                for j in range(rows):
                    s = float32(0)
                    for i in range(D):
                        s += sums[j + i]
                    out[row0 + j, col] = s * float32(INV)
            else:
                for j in range(rows):
                    row = row0 + j
                    if row < h:
                        r0, r1 = max(row - R, 0), min(row + R + 1, h)
                        c0, c1 = max(col - R, 0), min(col + R + 1, w)
                        total = float32(0)
                        for r in range(r0, r1):
                            for c in range(c0, c1):
                                total += image[r, c]
                        out[row, col] = total / float32((r1 - r0) * (c1 - c0))
        return blur_sliding

    def grid(shape):     # 32 × 8 threads, each `rows` pixels down a column
        h, w = shape
        return ((w + 31) // 32, ((h + rows - 1) // rows + 7) // 8), (32, 8)
    return _kernels.get(f"blur_sliding_{rows}", lambda: _ByRadius(make, grid))


def _blur_source(R: int, rows: int, cols: int) -> str:
    """Straight-line source of a blur kernel with the radius, rows and columns per thread fixed:
    the window loops are unrolled by construction (see :func:`blur_unrolled_rows`)."""
    D = 2 * R + 1
    nv = cols + 2 * R
    inv = repr(float(np.float32(1.0 / (D * D))))
    L = ["def blur_unrolled_rows(image, out, radius):",
         "    h, w = image.shape",
         f"    col = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * {cols}",
         f"    row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * {rows}",
         "    if col >= w or row0 >= h:",
         "        return",
         f"    if row0 >= {R} and row0 + {rows + R} <= h and col >= {R} and col + {cols + R} <= w:",
         f"        i0 = row0 - {R}",
         f"        j0 = col - {R}"]
    for t in range(rows + 2 * R):          # the row sums of input row row0 - R + t
        for b in range(nv):
            L.append(f"        v{t}_{b} = image[uint64(i0 + {t}), uint64(j0 + {b})]")
        if cols == 1:
            L.append(f"        s{t}_0 = " + " + ".join(f"v{t}_{b}" for b in range(D)))
        else:                              # 2 columns: the 2R values both windows hold, once
            L.append(f"        m{t} = " + " + ".join(f"v{t}_{b}" for b in range(1, D)))
            L.append(f"        s{t}_0 = v{t}_0 + m{t}")
            L.append(f"        s{t}_1 = m{t} + v{t}_{D}")
    for c in range(cols):                  # outputs k and k + 1 share 2R of their row sums
        for k in range(0, rows, 2):
            mid = " + ".join(f"s{t}_{c}" for t in range(k + 1, k + D))
            L.append(f"        q = {mid}")
            L.append(f"        out[uint64(row0 + {k}), uint64(col + {c})] = "
                     f"(s{k}_{c} + q) * float32({inv})")
            if k + 1 < rows:
                L.append(f"        out[uint64(row0 + {k + 1}), uint64(col + {c})] = "
                         f"(q + s{k + D}_{c}) * float32({inv})")
    L += ["    else:",
          f"        for k in range({rows}):",
          f"            for c in range({cols}):",
          "                row, cc = row0 + k, col + c",
          "                if row < h and cc < w:",
          f"                    r0, r1 = max(row - {R}, 0), min(row + {R + 1}, h)",
          f"                    c0, c1 = max(cc - {R}, 0), min(cc + {R + 1}, w)",
          "                    total = float32(0)",
          "                    for r in range(r0, r1):",
          "                        for q in range(c0, c1):",
          "                            total += image[r, q]",
          "                    out[row, cc] = total / float32((r1 - r0) * (c1 - c0))"]
    return "\n".join(L) + "\n"


def blur_unrolled_rows(rows: int = 16, cols: int = 1, block: tuple[int, int] = (32, 8)):
    """For `aag bench`: the row-sum design of :func:`blur_sliding_rows` written out as straight-line
    code (generated per radius, so nothing is left to unroll and every sum is a register): each
    thread blurs `rows` pixels down `cols` adjacent columns; it loads cols + 2r values of each of
    the rows + 2r input rows once (all loads independent, so the compiler issues the next rows'
    loads ahead of the current sums), forms the row sums (two columns share 2r of their values),
    and each pair of outputs down a column shares 2r of its 2r + 1 row sums. Indices are cast to
    uint64 (no negative-index wrap code). Pixels whose window leaves the image take the plain path
    (the sum of the in-image pixels divided by their count), as the other variants do."""
    def make(R):
        namespace = {"cuda": cuda, "float32": float32, "uint64": uint64}
        exec(compile(_blur_source(R, rows, cols), f"<blur_unrolled_{rows}x{cols}>", "exec"),
             namespace)
        return cuda.jit(namespace["blur_unrolled_rows"])

    def grid(shape):
        h, w = shape
        bx, by = block
        return ((w + bx * cols - 1) // (bx * cols), (h + by * rows - 1) // (by * rows)), block
    return _kernels.get(f"blur_unrolled_{rows}x{cols}_{block[0]}x{block[1]}",
                        lambda: _ByRadius(make, grid))


def _blur_tile_source(R: int, tw: int, th: int, nt: int) -> str:
    """Straight-line source of the shared-memory tile blur (see :func:`blur_shared_tile`) for a
    radius, a tile of `th` rows × `tw` columns and `nt` threads per block, all fixed."""
    D, twi, thi = 2 * R + 1, tw + 2 * R, th + 2 * R
    nin, rpt = thi * twi, th * tw // nt
    nl = (nin + nt - 1) // nt
    inv = repr(float(np.float32(1.0 / (D * D))))
    L = ["def blur_shared_tile(image, out, radius):",
         f"    tile = cuda.shared.array({nin}, float32)",
         "    h, w = image.shape",
         "    t = int64(cuda.threadIdx.x)",
         f"    r0 = int64(cuda.blockIdx.y) * {th}",
         f"    c0 = int64(cuda.blockIdx.x) * {tw}",
         f"    rb = r0 - {R}",
         f"    cb = c0 - {R}"]
    for k in range(nl):                    # every load issued before any store or sum
        L += [f"    x{k} = t + {k * nt}",
              f"    i{k} = int64(uint32(x{k}) // uint32({twi}))",
              f"    gr{k} = rb + i{k}",
              f"    gc{k} = cb + (x{k} - i{k} * {twi})",
              f"    v{k} = float32(0)"]
        inside = f"gr{k} >= 0 and gr{k} < h and gc{k} >= 0 and gc{k} < w"
        if (k + 1) * nt > nin:
            inside = f"x{k} < {nin} and " + inside
        L += [f"    if {inside}:",
              f"        v{k} = image[uint64(gr{k}), uint64(gc{k})]"]
    for k in range(nl):                    # pixels outside the image are 0 in the tile
        if (k + 1) * nt > nin:
            L += [f"    if x{k} < {nin}:", f"        tile[uint64(x{k})] = v{k}"]
        else:
            L.append(f"    tile[uint64(x{k})] = v{k}")
    L += ["    cuda.syncthreads()",
          f"    c = int64(uint32(t) % uint32({tw}))",
          f"    jr = int64(uint32(t) // uint32({tw})) * {rpt}",
          "    col = c0 + c",
          "    row0 = r0 + jr",
          "    if col < w and row0 < h:",
          f"        base = jr * {twi} + c"]
    for i in range(rpt + 2 * R):           # row sums of tile rows jr + i, this column's window
        L.append(f"        s{i} = " + " + ".join(f"tile[uint64(base + {i * twi + b})]"
                                             for b in range(D)))
    for k in range(0, rpt, 2):             # outputs k and k + 1 share 2R row sums
        mid = " + ".join(f"s{i}" for i in range(k + 1, k + D))
        L.append(f"        t{k} = s{k} + ({mid})")
        if k + 1 < rpt:
            L.append(f"        t{k + 1} = ({mid}) + s{k + D}")
    L.append(f"        if col >= {R} and col + {R} < w and row0 >= {R} and row0 + {rpt + R} <= h:")
    for k in range(rpt):
        L.append(f"            out[uint64(row0 + {k}), uint64(col)] = t{k} * float32({inv})")
    L += ["        else:",
          f"            nc = min(col + {R + 1}, w) - max(col - {R}, 0)"]
    for k in range(rpt):                   # edges: the mean of the in-image pixels
        L += [f"            if row0 + {k} < h:",
              f"                nr = min(row0 + {k + R + 1}, h) - max(row0 + {k - R}, 0)",
              f"                out[uint64(row0 + {k}), uint64(col)] = t{k} / float32(nr * nc)"]
    return "\n".join(L) + "\n"


def blur_shared_tile(tw: int = 128, th: int = 16, nt: int = 256):
    """For `aag bench`: aimed at the latency limit of the row-sum variants (Nsight Compute on the
    8-rows one: DRAM 37 %, SM 45 %, 64 registers, a third of the warps active, 4.7 sectors per
    load). Each block of `nt` threads (1-D) blurs a tile of `th` rows × `tw` columns: it first
    loads the tile and its halo, (th + 2r) × (tw + 2r) values, into shared memory, a flat
    coalesced sweep in which each thread issues all its ~(th + 2r)(tw + 2r) / nt loads before
    storing any (values outside the image stored as 0), so many loads are in flight per thread
    and every input is read once from DRAM (the halo rows again only from L2). After one barrier,
    each thread takes one column (a warp: 32 adjacent columns, no bank conflicts) and
    th · tw / nt rows: 2r + 1 shared-memory reads per row sum, then each output the sum of 2r + 1
    row sums (pairs of outputs share 2r). No plain path: at the edges the zeros add nothing and
    the sum is divided by the count of in-image pixels. Few live values, so few registers (aimed
    at ≤ 40) and most of the SM's warps resident. Generated straight-line source per radius, as
    in :func:`blur_unrolled_rows`; tw must be a multiple of 32 and nt of tw, th · tw / nt even.
    On the H200 (``aag bench``, docs/benchmarks.md), 4097 × 8191, r = 2: 0.083 ms (128 × 32,
    256 threads), 0.086 ms (64 × 16, 128 threads) and 0.090 ms (128 × 16, 256 threads), 75-80%
    of a copy, against 0.124 ms for the 8-rows variant (ptxas: 39-48 registers)."""
    assert tw % 32 == 0 and nt % tw == 0 and (th * tw // nt) % 2 == 0 and th * tw % nt == 0

    def make(R):
        import numba
        namespace = {"cuda": cuda, "float32": float32, "uint64": uint64,
                     "uint32": numba.uint32, "int64": numba.int64}
        exec(compile(_blur_tile_source(R, tw, th, nt), f"<blur_shared_tile_{tw}x{th}>", "exec"),
             namespace)
        return cuda.jit(namespace["blur_shared_tile"])

    def grid(shape):
        h, w = shape
        return ((w + tw - 1) // tw, (h + th - 1) // th), (nt, 1)
    return _kernels.get(f"blur_shared_tile_{tw}x{th}_{nt}", lambda: _ByRadius(make, grid))


# ---- 3.3 naive matrix multiplication -------------------------------------------------------------

@_kernels.lazy
def reference_matmul_naive():
    @cuda.jit
    def matmul_naive_reference(A, B, C):
        col, row = cuda.grid(2)
        if row < C.shape[0] and col < C.shape[1]:
            acc = float32(0)
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc
    return matmul_naive_reference
