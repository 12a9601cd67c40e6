"""Chapter 16's kernels of the course: a convolution layer's forward pass (one thread per output),
the unrolling of its input (im2col), max pooling, and the gradient of the loss with respect to the
layer's input (one thread per input element), in float32; and the product of the filters with the
unrolled input by chapter 6's register-tiled GEMM.

Layouts (NCHW, as PMPP and cuDNN's default): ``X[n, c, h, w]``, filters ``W[m, c, r, s]``,
``Y[n, m, p, q]`` with ``P = H − R + 1`` and ``Q = W − S + 1`` (a valid convolution, stride 1, no
padding). The grids: x across the output's columns, y down its rows, z over (image, map) pairs,
``blockIdx.z = n · maps + m``."""

from __future__ import annotations

import numpy as np

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None      # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def _layer_kernels() -> dict:
    """Compile the course's kernels of the chapter once for this backend."""

    @cuda.jit
    def conv_forward_reference(X, W, Y):
        # One thread per output Y[n, m, p, q]: a dot product of length C·R·S, in a float32
        # register, stored once. Neighbouring threads (along x) read neighbouring columns of X.
        q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        maps = W.shape[0]
        n = cuda.blockIdx.z // maps
        m = cuda.blockIdx.z % maps
        if p < Y.shape[2] and q < Y.shape[3]:
            acc = float32(0.0)
            for c in range(W.shape[1]):
                for r in range(W.shape[2]):
                    for s in range(W.shape[3]):
                        acc += X[n, c, p + r, q + s] * W[m, c, r, s]
            Y[n, m, p, q] = acc

    @cuda.jit
    def im2col_reference(X, Xu, R, S):
        # One thread per element of the unrolled matrix Xu[c·R·S + r·S + s, n·P·Q + p·Q + q]
        # = X[n, c, p + r, q + s]: x across Xu's columns, y down its rows.
        col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if row < Xu.shape[0] and col < Xu.shape[1]:
            P = X.shape[2] - R + 1
            Q = X.shape[3] - S + 1
            c = row // (R * S)
            r = (row // S) % R
            s = row % S
            n = col // (P * Q)
            p = (col // Q) % P
            q = col % Q
            Xu[row, col] = X[n, c, p + r, q + s]

    @cuda.jit
    def maxpool_reference(Y, out, K):
        # One thread per output: the largest of its K × K window of Y (stride K).
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        channels = out.shape[1]
        n = cuda.blockIdx.z // channels
        c = cuda.blockIdx.z % channels
        if i < out.shape[2] and j < out.shape[3]:
            best = Y[n, c, i * K, j * K]
            for a in range(K):
                for b in range(K):
                    v = Y[n, c, i * K + a, j * K + b]
                    if v > best:
                        best = v
            out[n, c, i, j] = best

    @cuda.jit
    def conv_backward_input_reference(dY, W, dX):
        # One thread per input element dX[n, c, h, w]: Σ over m, r, s of dY[n, m, h − r, w − s] ·
        # W[m, c, r, s], only where h − r and w − s fall inside dY (a "full" correlation of dY with
        # the filters turned by 180°).
        w = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        h = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        channels = W.shape[1]
        n = cuda.blockIdx.z // channels
        c = cuda.blockIdx.z % channels
        if h < dX.shape[2] and w < dX.shape[3]:
            P, Q = dY.shape[2], dY.shape[3]
            acc = float32(0.0)
            for m in range(W.shape[0]):
                for r in range(W.shape[2]):
                    p = h - r
                    if p >= 0 and p < P:
                        for s in range(W.shape[3]):
                            q = w - s
                            if q >= 0 and q < Q:
                                acc += dY[n, m, p, q] * W[m, c, r, s]
            dX[n, c, h, w] = acc

    return dict(forward=conv_forward_reference, im2col=im2col_reference,
                maxpool=maxpool_reference, backward=conv_backward_input_reference)


def reference_conv_forward():
    """Exercise 16.1 written by the course (the speed test's reference): one thread per output."""
    return _layer_kernels()["forward"]


def reference_im2col():
    """Exercise 16.2 written by the course: one thread per element of the unrolled matrix."""
    return _layer_kernels()["im2col"]


def reference_maxpool():
    """Exercise 16.3 written by the course: one thread per pooled output."""
    return _layer_kernels()["maxpool"]


def reference_conv_backward_input():
    """Exercise 16.4 written by the course: one thread per element of dX."""
    return _layer_kernels()["backward"]


# ---- the product with the filters: chapter 6's GEMM ---------------------------------------------

def course_gemm(A, B, C) -> None:
    """C = A @ B (float32 device arrays) by chapter 6's register-tiled kernel (64 × 64 tiles of C
    per block of 8 × 8 threads), the course's GEMM."""
    from autograder.problems.ch06.references import BM, BN, MATMUL_BLOCK, plain_register_tiled
    m, n = C.shape
    blocks = ((n + BN - 1) // BN, (m + BM - 1) // BM)
    plain_register_tiled()[blocks, MATMUL_BLOCK](A, B, C)


def unrolled_shape(N, C, H, W, R, S) -> tuple[int, int]:
    """The unrolled matrix's shape: (C·R·S rows, N·P·Q columns)."""
    return C * R * S, N * (H - R + 1) * (W - S + 1)


def im2col_scratch(X, W) -> tuple:
    """The two device arrays :func:`conv_by_im2col` works in, Xu [C·R·S, N·P·Q] and the
    product [M, N·P·Q]: made once, they keep allocations out of a timed region."""
    from numba import cuda
    N, C, H, Wd = X.shape
    M, _, R, S = W.shape
    rows, cols = unrolled_shape(N, C, H, Wd, R, S)
    return cuda.device_array((rows, cols), np.float32), cuda.device_array((M, cols), np.float32)


def conv_by_im2col(unroll, X, W, Y=None, threads=(16, 16), scratch=None):
    """The forward pass as two kernels and a reordering: ``unroll`` (a learner's im2col kernel,
    or the course's) writes Xu [C·R·S, N·P·Q] from X, chapter 6's GEMM multiplies the filters
    as a [M, C·R·S] matrix by it, giving [M, N·P·Q], and the result is reordered to
    Y[n, m, p, q]. Device arrays in, a device array ``Y`` out (made if not given); ``scratch``:
    the arrays of :func:`im2col_scratch`, else made here."""
    from numba import cuda
    N, C, H, Wd = X.shape
    M, _, R, S = W.shape
    rows, cols = unrolled_shape(N, C, H, Wd, R, S)
    P, Q = H - R + 1, Wd - S + 1
    Xu, out = scratch if scratch is not None else im2col_scratch(X, W)
    unroll[((cols + threads[0] - 1) // threads[0], (rows + threads[1] - 1) // threads[1]),
           threads](X, Xu, R, S)
    course_gemm(W.reshape(M, rows), Xu, out)
    if Y is None:
        Y = cuda.device_array((N, M, P, Q), np.float32)
    _reorder()[(N * M * P * Q + 255) // 256, 256](out.reshape(M, N, P, Q), Y)
    return Y


@_kernels.lazy
def _reorder():
    @cuda.jit
    def reorder_mn(src, dst):
        # dst[n, m, p, q] = src[m, n, p, q]: the GEMM's [M, N·P·Q] result in NCHW order.
        k = cuda.grid(1)
        N, M, P, Q = dst.shape
        if k < N * M * P * Q:
            q = k % Q
            p = (k // Q) % P
            m = (k // (P * Q)) % M
            n = k // (M * P * Q)
            dst[n, m, p, q] = src[m, n, p, q]
    return reorder_mn
