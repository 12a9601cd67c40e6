"""Chapter 5's reference kernel: the exercise's tiled matmul as the course writes it."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

TILE = 8   # the reference kernel's tile side (its blocks are TILE × TILE threads)
TILES = (8, 16, 32)   # the tile sides a learner may choose: a block of TILE² ≤ 1024 threads

cuda = float32 = None            # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def reference_tiled():
    """The exercise's algorithm (8 × 8 tiles, one element of C per thread), as the course writes
    it: the speed test asks for this kernel's speed, not for a faster algorithm (chapter 6). Its
    launch, like the learner's, reads the tile side from the module's ``TILE``."""
    @cuda.jit
    def tiled_matmul_reference(A, B, C):
        sA = cuda.shared.array((TILE, TILE), float32)
        sB = cuda.shared.array((TILE, TILE), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0)
        for start in range(0, K, TILE):
            sA[ty, tx] = A[row, start + tx] if row < M and start + tx < K else float32(0)
            sB[ty, tx] = B[start + ty, col] if start + ty < K and col < N else float32(0)
            cuda.syncthreads()
            for k in range(TILE):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc
    return tiled_matmul_reference
