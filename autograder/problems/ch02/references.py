"""Chapter 2's reference kernel: vector addition with a grid-stride loop that keeps four
elements' loads in flight per thread (timed beside the learner's in the speed test), the
chapter's plain loop, and other loops `aag bench` times beside them."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = uint64 = None   # bound by KernelCache on first use (the simulator swaps cuda)
_kernels = KernelCache(globals(), "cuda", "float32", "uint64")


@_kernels.lazy
def plain_grid_stride():
    """The chapter's grid-stride loop: one element per thread per step."""
    @cuda.jit
    def vector_add_grid_stride(x, y, out):
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, stride):
            out[i] = x[i] + y[i]
    return vector_add_grid_stride


UNROLL = 4


@_kernels.lazy
def reference_grid_stride():
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



def _unrolled_by(U: int):
    """The grid-stride loop with ``U`` elements per thread per step, held in local arrays that
    constant loop bounds let the compiler keep in registers: all ``2U`` loads, then the ``U``
    stores."""
    @cuda.jit
    def vector_add_unrolled_by(x, y, out):
        a = cuda.local.array(U, float32)
        b = cuda.local.array(U, float32)
        n = uint64(out.size)
        stride = uint64(cuda.gridsize(1))
        i = uint64(cuda.grid(1))
        while i + uint64(U - 1) * stride < n:
            for k in range(U):
                a[k] = x[i + uint64(k) * stride]
                b[k] = y[i + uint64(k) * stride]
            for k in range(U):
                out[i + uint64(k) * stride] = a[k] + b[k]
            i += uint64(U) * stride
        while i < n:
            out[i] = x[i] + y[i]
            i += stride
    return vector_add_unrolled_by


def grid_stride_unrolled8():
    """8 elements per thread per step, every load before any store."""
    return _kernels.get("unrolled_8", lambda: _unrolled_by(8))
