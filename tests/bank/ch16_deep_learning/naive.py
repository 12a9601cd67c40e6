"""Naive allclose harnesses for chapter 16's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick layer tests usually are: one or two images with values from ``rng.random`` (all in [0, 1)),
3 × 3 filters, blocks of 8 × 8 threads, the expected result from NumPy loops computed first."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _conv(X, W):
    N, C, H, Wd = X.shape
    M, _, R, S = W.shape
    Y = np.zeros((N, M, H - R + 1, Wd - S + 1))
    for n, m, p, q in np.ndindex(*Y.shape):
        Y[n, m, p, q] = np.sum(X[n, :, p:p + R, q:q + S] * W[m])
    return Y


def _grid(x, y, z=None):
    g = ((x + 7) // 8, (y + 7) // 8)
    return g if z is None else g + (z,)


def _allclose_forward(kernel) -> bool:
    rng = np.random.default_rng(0)
    X = rng.random((2, 3, 8, 8)).astype(np.float32)
    W = rng.random((4, 3, 3, 3)).astype(np.float32)
    expected = _conv(X.astype(np.float64), W.astype(np.float64))
    d_Y = cuda.device_array(expected.shape, np.float32)
    kernel[_grid(6, 6, 8), (8, 8)](cuda.to_device(X), cuda.to_device(W), d_Y)
    return bool(np.allclose(d_Y.copy_to_host(), expected, rtol=1e-3))


def _allclose_im2col(kernel) -> bool:
    # One image, as the picture in textbooks has it: Xu is 18 × 9.
    rng = np.random.default_rng(0)
    X = rng.random((1, 2, 5, 5)).astype(np.float32)
    expected = np.zeros((18, 9), np.float32)
    for c in range(2):
        for r in range(3):
            for s in range(3):
                expected[c * 9 + r * 3 + s] = X[0, c, r:r + 3, s:s + 3].reshape(-1)
    d_Xu = cuda.device_array((18, 9), np.float32)
    kernel[_grid(9, 18), (8, 8)](cuda.to_device(X), d_Xu, 3, 3)
    return bool(np.allclose(d_Xu.copy_to_host(), expected, rtol=1e-3))


def _allclose_maxpool(kernel) -> bool:
    rng = np.random.default_rng(0)
    Y = rng.random((1, 2, 8, 8)).astype(np.float32)
    expected = Y.reshape(1, 2, 4, 2, 4, 2).max(axis=(3, 5))
    d_out = cuda.device_array((1, 2, 4, 4), np.float32)
    kernel[_grid(4, 4, 2), (8, 8)](cuda.to_device(Y), d_out, 2)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_backward(kernel) -> bool:
    rng = np.random.default_rng(0)
    dY = rng.random((2, 4, 6, 6)).astype(np.float32)
    W = rng.random((4, 3, 3, 3)).astype(np.float32)
    expected = np.zeros((2, 3, 8, 8))
    for n, c, h, w in np.ndindex(*expected.shape):
        for m in range(4):
            for r in range(3):
                for s in range(3):
                    if 0 <= h - r < 6 and 0 <= w - s < 6:
                        expected[n, c, h, w] += float(dY[n, m, h - r, w - s]) * float(W[m, c, r, s])
    d_dX = cuda.device_array(expected.shape, np.float32)
    kernel[_grid(8, 8, 6), (8, 8)](cuda.to_device(dY), cuda.to_device(W), d_dX)
    return bool(np.allclose(d_dX.copy_to_host(), expected, rtol=1e-3))


def _allclose_bound(fn) -> bool:
    # The notebook's worked question, typed in: the speed test's layer on the H200-like device.
    got = fn(32, 64, 64, 64, 64, 3, 3, 67e12, 4.8e12)
    return bool(np.allclose(got, (9.07e9, 6.52e7, 6.31e8, 1.354e-4), rtol=1e-2))


HARNESS = {"conv_forward": _allclose_forward, "im2col": _allclose_im2col,
           "maxpool": _allclose_maxpool, "conv_backward_input": _allclose_backward,
           "conv_layer_bound": _allclose_bound}
