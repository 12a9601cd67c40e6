"""Chapter 2's reference kernel: vector addition with a grid-stride loop (timed beside the
learner's in the speed test)."""

from __future__ import annotations

import numpy as np

from autograder.problems.kit.kernels import KernelCache

cuda = uint32 = uint64 = libdevice = None   # bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "uint32", "uint64", "libdevice")


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


@_kernels.lazy
def grid_stride_pairs():
    """Two elements per 8-byte load: ``x``, ``y`` and ``out`` viewed as uint64 pairs (half the
    load and store instructions, as chapter 10's sum reads its data), two pairs per thread per
    step with the loads before the stores, unsigned indices; the odd last element by thread 0."""
    @cuda.jit(device=True, inline=True)
    def add_pair(p, q):
        lo = uint32(p & 0xFFFFFFFF).view(np.float32) + uint32(q & 0xFFFFFFFF).view(np.float32)
        hi = uint32(p >> 32).view(np.float32) + uint32(q >> 32).view(np.float32)
        return (uint64(libdevice.float_as_int(hi)) << uint64(32)) | \
            (uint64(libdevice.float_as_int(lo)) & uint64(0xFFFFFFFF))

    @cuda.jit
    def vector_add_pairs(x, y, out):
        n = out.size
        half = n // 2
        xp = x[:2 * half].view(np.uint64)
        yp = y[:2 * half].view(np.uint64)
        op = out[:2 * half].view(np.uint64)
        end = uint64(half)
        stride = uint64(cuda.gridsize(1))
        i = uint64(cuda.grid(1))
        while i + stride < end:
            p0, q0 = xp[i], yp[i]
            p1, q1 = xp[i + stride], yp[i + stride]
            op[i] = add_pair(p0, q0)
            op[i + stride] = add_pair(p1, q1)
            i += 2 * stride
        while i < end:
            op[i] = add_pair(xp[i], yp[i])
            i += stride
        if cuda.grid(1) == 0 and n % 2 == 1:
            out[n - 1] = x[n - 1] + y[n - 1]
    return vector_add_pairs
