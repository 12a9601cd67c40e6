"""Naive allclose harnesses for chapter 26's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick attention tests usually are: 2 heads of 64 tokens at d = 16 from ``rng.standard_normal``
(scores with a spread of about 1: nothing near exp's overflow), no mask, scale 1 / sqrt(d), the
expected result from NumPy in float64 computed first; 26.1 in blocks of 32 threads, 26.2 in blocks
of 32 query rows (every side a multiple of the tile, as textbook tests have it), 26.3's launcher
on float16 inputs."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

BH, N, D = 2, 64, 16


def _inputs(dtype=np.float32):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((BH, N, D)).astype(dtype) for _ in range(3))
    scale = np.float32(1.0 / np.sqrt(D))
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    s = float(scale) * np.einsum("bid,bjd->bij", q64, k64)
    p = np.exp(s - s.max(axis=2, keepdims=True))
    expected = (p / p.sum(axis=2, keepdims=True)) @ v64
    return q, k, v, scale, expected


def _allclose_naive(kernel) -> bool:
    q, k, v, scale, expected = _inputs()
    d_o = cuda.device_array((BH, N, D), np.float32)
    s = cuda.device_array((BH, N, N), np.float32)
    kernel[BH * N // 32, 32](cuda.to_device(q), cuda.to_device(k), cuda.to_device(v), scale, 0,
                             s, d_o)
    return bool(np.allclose(d_o.copy_to_host(), expected, rtol=1e-3, atol=1e-5))


def _allclose_flash(kernel) -> bool:
    q, k, v, scale, expected = _inputs()
    d_o = cuda.device_array((BH, N, D), np.float32)
    kernel[(N // 32, BH), 32](cuda.to_device(q), cuda.to_device(k), cuda.to_device(v), scale, 0,
                              d_o)
    return bool(np.allclose(d_o.copy_to_host(), expected, rtol=1e-3, atol=1e-5))


def _allclose_triton(launcher) -> bool:
    q, k, v, scale, expected = _inputs(np.float16)
    d_o = cuda.device_array((BH, N, D), np.float32)
    launcher(cuda.to_device(q), cuda.to_device(k), cuda.to_device(v), float(scale), 0, d_o)
    return bool(np.allclose(d_o.copy_to_host(), expected, rtol=1e-3, atol=1e-3))


HARNESS = {"attention_naive": _allclose_naive, "flash_attention": _allclose_flash,
           "attention_triton": _allclose_triton}
