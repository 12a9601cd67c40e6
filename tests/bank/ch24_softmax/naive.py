"""Naive allclose harnesses for chapter 24's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick softmax tests usually are: a few rows of 32 values from ``rng.random`` (all in [0, 1): no
large values, no masks), the expected result from NumPy computed first; the bound's worked cases
typed in from the notebook."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _rows():
    x = np.random.default_rng(0).random((8, 32)).astype(np.float32)
    e = np.exp(x.astype(np.float64))
    return x, e / e.sum(axis=1, keepdims=True)


def _allclose_rows(kernel) -> bool:
    x, expected = _rows()
    d_y = cuda.device_array(x.shape, np.float32)
    kernel[1, 32](cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_warp(kernel) -> bool:
    # 8 rows, 2 blocks of 64 threads: 4 warps of 32, two rows each.
    x, expected = _rows()
    d_y = cuda.device_array(x.shape, np.float32)
    kernel[2, 64](cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_triton(launcher) -> bool:
    # The learner's launcher on the same 8 rows of 32 (a whole block: no padding lanes).
    x, expected = _rows()
    d_y = cuda.device_array(x.shape, np.float32)
    launcher(cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_bound(fn) -> bool:
    # The notebook's two questions, answers typed in.
    got = [fn(65536, 2.0, 0.0), fn(72, 2.0, 20.0)]
    return bool(np.allclose(got, [(0.0240, 0.02459), (2.718e-05, 2.873e-05)], rtol=1e-3))


HARNESS = {"softmax_rows": _allclose_rows, "softmax_warp": _allclose_warp,
           "softmax_error_bound": _allclose_bound, "softmax_triton": _allclose_triton}
