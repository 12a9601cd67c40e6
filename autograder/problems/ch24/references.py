"""Chapter 24's kernels of the course: a row softmax in float32, one thread per row (online: one
read for the running maximum and sum, one read and one write for the outputs), one warp per row
(each lane's partial (m, d) pair merged across the warp with shuffles, for warps of 32 or 64
lanes), and the three-pass warp kernel (maximum, sum of exponentials, normalisation: the row read
three times) that the measuring cell sets beside them; and the launcher of 24.4's Triton kernel
(``triton_reference.py``, imported only when it is asked for: Triton is not needed elsewhere).

The rule for masked entries (see the package's docstring): an entry of −inf contributes 0, and
a row whose entries are all −inf gives 0 everywhere. Every kernel below keeps the pair
(m, d) = (−inf, 0) for "nothing seen yet" and never evaluates exp(−inf − (−inf))."""

from __future__ import annotations

import math

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = uint64 = None      # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32", "uint64")


@_kernels.lazy
def _softmax_kernels() -> dict:
    """Compile the course's softmax kernels once for this backend."""

    @cuda.jit
    def softmax_rows_reference(x, y):
        # One thread per row: the running pair (m, d), rescaled when the maximum grows.
        r = cuda.grid(1)
        if r < x.shape[0]:
            m = float32(-math.inf)
            d = float32(0.0)
            for j in range(x.shape[1]):
                v = x[r, j]
                if v > m:
                    d = d * math.exp(m - v) + float32(1.0)   # exp(−inf) = 0 while d is 0
                    m = v
                elif v > float32(-math.inf):
                    d += math.exp(v - m)
            for j in range(x.shape[1]):
                y[r, j] = math.exp(x[r, j] - m) / d if d > float32(0.0) else float32(0.0)

    @cuda.jit
    def softmax_warp_reference(x, y):
        # One warp per row, the warps of the grid striding over the rows. Each lane folds its
        # columns (lane, lane + W, ...) into a pair (m, d); a butterfly of shuffles merges the
        # pairs, so every lane ends with the row's pair; then each lane writes its columns.
        W = cuda.warpsize
        mask = ~uint64(0) >> (64 - W)             # every lane of the warp, 32 or 64
        lane = cuda.threadIdx.x % W
        warp = cuda.grid(1) // W
        warps = cuda.gridsize(1) // W
        n = x.shape[1]
        for r in range(warp, x.shape[0], warps):
            m = float32(-math.inf)
            d = float32(0.0)
            for j in range(lane, n, W):
                v = x[r, j]
                if v > m:
                    d = d * math.exp(m - v) + float32(1.0)
                    m = v
                elif v > float32(-math.inf):
                    d += math.exp(v - m)
            offset = W // 2
            while offset > 0:
                m2 = cuda.shfl_xor_sync(mask, m, offset)
                d2 = cuda.shfl_xor_sync(mask, d, offset)
                big = max(m, m2)
                if big > float32(-math.inf):       # else both pairs are empty: (−inf, 0)
                    d = d * math.exp(m - big) + d2 * math.exp(m2 - big)
                    m = big
                offset //= 2
            for j in range(lane, n, W):
                y[r, j] = math.exp(x[r, j] - m) / d if d > float32(0.0) else float32(0.0)

    @cuda.jit
    def softmax_three_pass(x, y):
        # One warp per row, the textbook order: the maximum (a read), the sum of exponentials
        # (a second read), the normalised values (a third read and the write).
        W = cuda.warpsize
        mask = ~uint64(0) >> (64 - W)
        lane = cuda.threadIdx.x % W
        warp = cuda.grid(1) // W
        warps = cuda.gridsize(1) // W
        n = x.shape[1]
        for r in range(warp, x.shape[0], warps):
            m = float32(-math.inf)
            for j in range(lane, n, W):
                m = max(m, x[r, j])
            offset = W // 2
            while offset > 0:
                m = max(m, cuda.shfl_xor_sync(mask, m, offset))
                offset //= 2
            d = float32(0.0)
            if m > float32(-math.inf):
                for j in range(lane, n, W):
                    d += math.exp(x[r, j] - m)
            offset = W // 2
            while offset > 0:
                d += cuda.shfl_xor_sync(mask, d, offset)
                offset //= 2
            for j in range(lane, n, W):
                y[r, j] = math.exp(x[r, j] - m) / d if d > float32(0.0) else float32(0.0)

    return dict(rows=softmax_rows_reference, warp=softmax_warp_reference,
                three_pass=softmax_three_pass)


def reference_softmax_rows():
    """Exercise 24.1 written by the course: one thread per row, online."""
    return _softmax_kernels()["rows"]


def reference_softmax_warp():
    """Exercise 24.2 written by the course (the speed test's reference): one warp per row, the
    pairs merged with shuffles, the row read twice and written once."""
    return _softmax_kernels()["warp"]


def three_pass_softmax():
    """The textbook's three passes, one warp per row: the row read three times, written once."""
    return _softmax_kernels()["three_pass"]


def reference_softmax_triton():
    """Exercise 24.4 written by the course (the speed test's reference): a launcher
    ``softmax(x, y)`` of a Triton kernel, one program per row. Imports Triton, on first use only
    (:mod:`autograder.problems.ch24.triton_reference`)."""
    from autograder.problems.ch24.triton_reference import softmax_triton_reference
    return softmax_triton_reference
