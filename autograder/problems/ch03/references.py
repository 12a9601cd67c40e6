"""Chapter 3's reference kernels (timed beside the learner's, and by ``aag bench``), the CuPy
vendor call, and the blur variants ``aag bench`` times beside the reference."""

from __future__ import annotations

import numpy as np

from autograder.problems.kit.images import GRAY_WEIGHTS
from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None            # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


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
