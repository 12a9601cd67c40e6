"""Naive allclose harnesses for chapter 17's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick F^H·d tests usually are: 100 voxels in the unit cube and 32 samples of a k-space of ±8
cycles from ``np.random.default_rng(0)``, μ in [0, 1), blocks of 64 threads, the expected values
from a NumPy sum over a voxel × sample matrix computed first."""

from __future__ import annotations

import math

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_fhd(kernel) -> bool:
    rng = np.random.default_rng(0)
    n, m = 100, 32
    k = rng.uniform(-8, 8, (3, m)).astype(np.float32)
    v = rng.uniform(-0.5, 0.5, (3, n)).astype(np.float32)
    mu = rng.random((2, m)).astype(np.float32)
    theta = 2 * np.pi * (np.outer(v[0], k[0]) + np.outer(v[1], k[1]) + np.outer(v[2], k[2]))
    expected_re = np.cos(theta) @ mu[0] - np.sin(theta) @ mu[1]
    expected_im = np.cos(theta) @ mu[1] + np.sin(theta) @ mu[0]
    re, im = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    args = [cuda.to_device(a) for a in (k[0], k[1], k[2], v[0], v[1], v[2], mu[0], mu[1])]
    kernel[(n + 63) // 64, 64](*args, re, im)
    return bool(np.allclose(re.copy_to_host(), expected_re, rtol=1e-3)
                and np.allclose(im.copy_to_host(), expected_im, rtol=1e-3))


def _allclose_bound(fn) -> bool:
    # The notebook's worked question, typed in: the speed test's scan with fast sin and cos.
    got = fn(20011, 20011.0, 302.0, 2.0 ** -21, 2.0 ** -22)
    u = 2.0 ** -24
    gamma5, gamma_m = 5 * u / (1 - 5 * u), 20013 * u / (1 - 20013 * u)
    expected = 20011.0 * (2.0 ** -21 + 2.0 ** -22 * 302 + gamma5 * 302 + gamma_m)
    return bool(math.isclose(got, expected, rel_tol=1e-3))


HARNESS = {"fhd_gather": _allclose_fhd, "fhd_chunked": _allclose_fhd,
           "fhd_error_bound": _allclose_bound}
