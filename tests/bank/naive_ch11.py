"""Naive allclose harnesses for chapter 11's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``.

    kogge_stone        256    values in [0, 1), 4 blocks of 64 threads (sections of 64, a whole
                              number of them), the sections' np.cumsum computed first
    scan_hierarchical  3000   values in [0, 1), 32 threads per block (tiles of 16 · 32 = 512),
                              launched through the course's ``scan_any_length``, np.cumsum first
"""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_kogge_stone(kernel) -> bool:
    rng = np.random.default_rng(0)
    x = rng.random(256, dtype=np.float32)
    expected = np.cumsum(x.reshape(4, 64), axis=1).reshape(-1)
    d_y = cuda.device_array(256, dtype=np.float32)
    kernel[4, 64](cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_scan_hierarchical(kernels) -> bool:
    from autograder.problems import ch11
    rng = np.random.default_rng(0)
    x = rng.random(3000, dtype=np.float32)
    expected = np.cumsum(x.astype(np.float64))
    d_y = cuda.device_array(3000, dtype=np.float32)
    ch11.scan_any_length(kernels, cuda.to_device(x), d_y, 32)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


HARNESS = {"kogge_stone": _allclose_kogge_stone,
           "scan_hierarchical": _allclose_scan_hierarchical}
