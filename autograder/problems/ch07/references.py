"""Chapter 7's reference kernel (timed beside the learner's in the speed test): a kernel factory
like the learner's tiled one, with a launch of its own (:func:`reference_shape`)."""

from __future__ import annotations

import numpy as np

from autograder.problems.kit.kernels import KernelCache

# Each thread of a REF_BLOCK block computes REF_ROWS outputs of one column, keeping the REF_ROWS
# running sums in registers: an input row it loads (2r + 1 values) serves up to 2r + 1 of its
# outputs, so a thread loads (REF_ROWS + 2r)(2r + 1) values for REF_ROWS outputs (7.5 per output
# for r = 2) instead of (2r + 1)² = 25. Loads go through L1 (no shared memory, no barrier); a warp
# reads 32 neighbouring columns of a row at a time (coalesced). The filter and r are compile-time
# constants, so every loop has a constant trip count and can be unrolled.
REF_ROWS = 8
REF_BLOCK = (32, 8)

cuda = float32 = None            # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


def reference_shape(h: int, w: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(blocks, threads) of the reference kernel for an h × w image."""
    bx, by = REF_BLOCK
    return ((w + bx - 1) // bx, (h + by * REF_ROWS - 1) // (by * REF_ROWS)), REF_BLOCK


@_kernels.lazy
def reference_conv2d_tiled():
    """The course reference: a factory like the learner's, ``make(F, in_tile)`` (``in_tile`` is
    ignored: the reference has its own launch, see :func:`reference_shape`)."""
    def make_reference(F, in_tile=0):
        F = np.ascontiguousarray(F, dtype=np.float32)
        r = F.shape[0] // 2
        d = 2 * r + 1
        rows = REF_ROWS

        @cuda.jit
        def conv2d_reference(image, out):
            Fc = cuda.const.array_like(F)
            h, w = image.shape
            col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * rows
            if col >= w or row0 >= h:
                return
            acc = cuda.local.array(rows, float32)
            v = cuda.local.array(d, float32)
            for k in range(rows):
                acc[k] = float32(0)
            for t in range(rows + 2 * r):          # input rows row0 - r .. row0 + rows - 1 + r
                i = row0 + t - r
                inside = i >= 0 and i < h
                for b in range(d):
                    j = col + b - r
                    v[b] = image[i, j] if inside and j >= 0 and j < w else float32(0)
                for k in range(rows):              # output row0 + k uses filter row t - k
                    a = t - k
                    if a >= 0 and a < d:
                        for b in range(d):
                            acc[k] += Fc[a, b] * v[b]
            for k in range(rows):
                if row0 + k < h:
                    out[row0 + k, col] = acc[k]
        return conv2d_reference

    return make_reference
