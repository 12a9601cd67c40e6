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
