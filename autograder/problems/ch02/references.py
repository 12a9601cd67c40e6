"""Chapter 2's reference kernel: vector addition with a grid-stride loop (timed beside the
learner's in the speed test)."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

cuda = None     # numba.cuda, bound by KernelCache on first use (the simulator swaps it here)
_kernels = KernelCache(globals(), "cuda")


@_kernels.lazy
def reference_grid_stride():
    @cuda.jit
    def vector_add_grid_stride(x, y, out):
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, stride):
            out[i] = x[i] + y[i]
    return vector_add_grid_stride
