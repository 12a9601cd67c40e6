"""Naive allclose harnesses for chapter 11's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``.

    kogge_stone        256    values in [0, 1), 4 blocks of 64 threads (sections of 64, a whole
                              number of them), the sections' np.cumsum computed first
    brent_kung         256    values in [0, 1), 4 blocks of 32 threads (sections of 2 · 32 = 64,
                              a whole number of them), the sections' np.cumsum computed first
    scan_traffic       3      the notebook's worked case (2^28 elements in tiles of 4096, typed in
                              to 4 digits), exactly one tile and one tile plus one element
    scan_hierarchical  3000   values in [0, 1), 32 threads per block (tiles of 16 · 32 = 512),
                              launched through the course's ``scan_any_length``, np.cumsum first
    scan_single_pass   3000   values in [0, 1), 32 threads per block (6 tiles of 512), launched
                              through the course's ``single_pass_scan`` as the notebook's own
                              try-it cell does, np.cumsum first
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


def _allclose_brent_kung(kernel) -> bool:
    rng = np.random.default_rng(0)
    x = rng.random(256, dtype=np.float32)
    expected = np.cumsum(x.reshape(4, 64), axis=1).reshape(-1)
    d_y = cuda.device_array(256, dtype=np.float32)
    kernel[4, 32](cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_scan_traffic(scan_traffic) -> bool:
    cases = [((1 << 28, 4096), 4.297e9),          # the notebook's "predict first" case
             ((4096, 4096), 32772),               # exactly one tile: 4 · (2 · 4096 + 1)
             ((4097, 4096), 65588)]               # two tiles, and the scan of their 2 sums
    return all(bool(np.isclose(scan_traffic(*args), b, rtol=1e-3)) for args, b in cases)


def _allclose_scan_hierarchical(kernels) -> bool:
    from autograder.problems import ch11
    rng = np.random.default_rng(0)
    x = rng.random(3000, dtype=np.float32)
    expected = np.cumsum(x.astype(np.float64))
    d_y = cuda.device_array(3000, dtype=np.float32)
    ch11.scan_any_length(kernels, cuda.to_device(x), d_y, 32)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_scan_single_pass(kernel) -> bool:
    from autograder.problems import ch11
    rng = np.random.default_rng(0)
    x = rng.random(3000, dtype=np.float32)
    expected = np.cumsum(x.astype(np.float64))
    d_y = cuda.device_array(3000, dtype=np.float32)
    ch11.single_pass_scan(kernel, cuda.to_device(x), d_y, 32)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


HARNESS = {"kogge_stone": _allclose_kogge_stone, "brent_kung": _allclose_brent_kung,
           "scan_traffic": _allclose_scan_traffic,
           "scan_hierarchical": _allclose_scan_hierarchical,
           "scan_single_pass": _allclose_scan_single_pass}
