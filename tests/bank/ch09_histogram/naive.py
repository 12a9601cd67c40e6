"""Naive allclose harnesses for chapter 9's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_histogram(kernel, blocks, threads, n=1000) -> bool:
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, n, dtype=np.uint8)
    expected = np.bincount(data, minlength=256)
    d_hist = cuda.to_device(np.zeros(256, dtype=np.uint32))
    kernel[blocks, threads](cuda.to_device(data), d_hist)
    return bool(np.allclose(d_hist.copy_to_host(), expected, rtol=1e-3))


def _allclose_histogram_global(kernel) -> bool:
    return _allclose_histogram(kernel, (1000 + 255) // 256, 256)


def _allclose_histogram_private(kernel) -> bool:
    return _allclose_histogram(kernel, 2, 128)        # a grid smaller than the data


def _allclose_histogram_time_bound(histogram_time_bound) -> bool:
    n = 1 << 28                                        # the chapter's four worked cases, typed in
    cases = [((1 / 256, 4.8e12, 1e11, 5e8, 1), 2.6844e-3), ((0.9, 4.8e12, 1e11, 5e8, 1), 0.48318),
             ((1 / 256, 4.8e12, 2e12, 1e9, 1056), 1.3422e-4),
             ((0.9, 4.8e12, 2e12, 1e9, 1056), 2.2878e-4)]
    return all(bool(np.isclose(histogram_time_bound(n, *args), t, rtol=1e-3)) for args, t in cases)


HARNESS = {"histogram_global": _allclose_histogram_global,
           "histogram_private": _allclose_histogram_private,
           "histogram_aggregate": _allclose_histogram_private,
           "histogram_time_bound": _allclose_histogram_time_bound}
