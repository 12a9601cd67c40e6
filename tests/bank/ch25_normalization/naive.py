"""Naive allclose harnesses for chapter 25's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick normalisation tests usually are: 64 rows of 256 values from ``rng.random`` (all in [0, 1),
so no large offset), γ = 1 and β = 0, ε = 1e-5, 4 blocks of 128 threads (one warp per row; the
Triton exercise's launcher picks its own grid), the expected result from NumPy in float64
computed first."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

ROWS, N = 64, 256


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.random((ROWS, N)).astype(np.float32)
    return rng, x, np.ones(N, np.float32), np.zeros(N, np.float32), np.float32(1e-5)


def _allclose_layernorm(kernel) -> bool:
    _, x, g, b, eps = _inputs()
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    expected = (x64 - mu) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    d_y = cuda.device_array((ROWS, N), np.float32)
    kernel[4, 128](cuda.to_device(x), cuda.to_device(g), cuda.to_device(b), eps, d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_layernorm_triton(launcher) -> bool:
    """25.4's launcher ``launcher(x, gamma, beta, eps, y)`` on device arrays, ε a Python float."""
    _, x, g, b, _ = _inputs()
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    expected = (x64 - mu) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    d_y = cuda.device_array((ROWS, N), np.float32)
    launcher(cuda.to_device(x), cuda.to_device(g), cuda.to_device(b), 1e-5, d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_rmsnorm(kernel) -> bool:
    _, x, g, _, eps = _inputs()
    x64 = x.astype(np.float64)
    expected = x64 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + 1e-5)
    d_y = cuda.device_array((ROWS, N), np.float32)
    kernel[4, 128](cuda.to_device(x), cuda.to_device(g), eps, d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_backward(kernel) -> bool:
    rng, x, g, _, _ = _inputs()
    dy = rng.random((ROWS, N)).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1).astype(np.float32)
    rstd = (1.0 / np.sqrt(x64.var(axis=1) + 1e-5)).astype(np.float32)
    xhat = (x64 - mean[:, None]) * rstd[:, None]
    d64 = dy.astype(np.float64)
    expected = rstd[:, None] * (d64 - d64.mean(axis=1, keepdims=True)
                                - xhat * (d64 * xhat).mean(axis=1, keepdims=True))
    d_dx = cuda.device_array((ROWS, N), np.float32)
    kernel[4, 128](cuda.to_device(dy), cuda.to_device(x), cuda.to_device(g),
                   cuda.to_device(mean), cuda.to_device(rstd), d_dx)
    return bool(np.allclose(d_dx.copy_to_host(), expected, rtol=1e-3, atol=1e-5))


HARNESS = {"layernorm_rows": _allclose_layernorm, "rmsnorm_rows": _allclose_rmsnorm,
           "layernorm_backward": _allclose_backward,
           "layernorm_triton": _allclose_layernorm_triton}
