"""Chapter 2's reference kernel: vector addition with a grid-stride loop (timed beside the
learner's in the speed test)."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

cuda = uint64 = None     # bound by KernelCache on first use (the simulator swaps cuda here)
_kernels = KernelCache(globals(), "cuda", "uint64")


@_kernels.lazy
def reference_grid_stride():
    @cuda.jit
    def vector_add_grid_stride(x, y, out):
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, stride):
            out[i] = x[i] + y[i]
    return vector_add_grid_stride


# ---- candidates for issue 23's vector-add row (timed by `aag bench` beside the reference) -------

UNROLL = 4


@_kernels.lazy
def grid_stride_unrolled():
    """The grid-stride loop with UNROLL elements per thread per step, every load issued before
    any store: a thread keeps 2·UNROLL loads in flight, where the plain loop's store to ``out``
    (which may alias ``x`` or ``y`` for all the compiler knows) orders each step's loads after
    the previous step's store. The indices are unsigned (no negative-index wrap-around code)."""
    @cuda.jit
    def vector_add_unrolled(x, y, out):
        n = uint64(out.size)
        stride = uint64(cuda.gridsize(1))
        i = uint64(cuda.grid(1))
        while i + uint64(UNROLL - 1) * stride < n:
            a0, b0 = x[i], y[i]
            a1, b1 = x[i + stride], y[i + stride]
            a2, b2 = x[i + 2 * stride], y[i + 2 * stride]
            a3, b3 = x[i + 3 * stride], y[i + 3 * stride]
            out[i] = a0 + b0
            out[i + stride] = a1 + b1
            out[i + 2 * stride] = a2 + b2
            out[i + 3 * stride] = a3 + b3
            i += uint64(UNROLL) * stride
        while i < n:
            out[i] = x[i] + y[i]
            i += stride
    return vector_add_unrolled


@_kernels.lazy
def grid_stride_unsigned():
    """The reference's loop with unsigned indices only (is the index arithmetic the limit?)."""
    @cuda.jit
    def vector_add_unsigned(x, y, out):
        n = uint64(out.size)
        stride = uint64(cuda.gridsize(1))
        i = uint64(cuda.grid(1))
        while i < n:
            out[i] = x[i] + y[i]
            i += stride
    return vector_add_unsigned

