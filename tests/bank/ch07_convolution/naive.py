"""Naive allclose harnesses for chapter 7's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _conv_numpy(image, F):
    r = F.shape[0] // 2
    h, w = image.shape
    padded = np.zeros((h + 2 * r, w + 2 * r), np.float32)
    padded[r:r + h, r:r + w] = image
    out = np.zeros_like(image)
    for a in range(2 * r + 1):
        for b in range(2 * r + 1):
            out += F[a, b] * padded[a:a + h, b:b + w]
    return out


def _allclose_conv2d_basic(kernel) -> bool:
    h, w, r = 16, 24, 1
    rng = np.random.default_rng(0)
    image = rng.random((h, w), dtype=np.float32)
    F = rng.random((2 * r + 1, 2 * r + 1), dtype=np.float32)
    expected = _conv_numpy(image, F)
    d_out = cuda.device_array((h, w), np.float32)
    kernel[(2, 1), (16, 16)](cuda.to_device(image), cuda.to_device(F), d_out, r)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_conv2d_constant(make) -> bool:
    h, w, r = 16, 24, 1
    rng = np.random.default_rng(0)
    image = rng.random((h, w), dtype=np.float32)
    F = rng.random((2 * r + 1, 2 * r + 1), dtype=np.float32)
    expected = _conv_numpy(image, F)
    d_out = cuda.device_array((h, w), np.float32)
    make(F)[(2, 1), (16, 16)](cuda.to_device(image), d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_conv2d_tiled(make) -> bool:
    # A 3 × 3 filter and 16 × 16 tiles (14 × 14 outputs per block), as textbook tests have it.
    h, w, r, in_tile = 28, 42, 1, 16
    rng = np.random.default_rng(0)
    image = rng.random((h, w), dtype=np.float32)
    F = rng.random((2 * r + 1, 2 * r + 1), dtype=np.float32)
    expected = _conv_numpy(image, F)
    d_out = cuda.device_array((h, w), np.float32)
    make(F, in_tile)[(3, 2), (in_tile, in_tile)](cuda.to_device(image), d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_conv_time_bounds(conv_time_bounds) -> bool:
    # The notebook's worked question, answers typed in to 4 digits, rtol = 1e-3.
    expected = (2.852e-3, 1.454e-3, 1.290e-4, 1.118e-4)   # 8191 × 8193, r = 2, 32 × 32, H200-like
    got = conv_time_bounds(8191, 8193, 2, 32, 67e12, 4.8e12)
    return len(got) == 4 and all(bool(np.isclose(g, e, rtol=1e-3)) for g, e in zip(got, expected))


HARNESS = {"conv2d_basic": _allclose_conv2d_basic, "conv2d_constant": _allclose_conv2d_constant,
           "conv2d_tiled": _allclose_conv2d_tiled, "conv_time_bounds": _allclose_conv_time_bounds}
