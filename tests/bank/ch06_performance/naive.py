"""Naive allclose harnesses for chapter 6's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

from bank.naive import launch_2d


def _allclose_transpose_naive(kernel) -> bool:
    m, n = 24, 40                                  # 16 x 16 blocks, not square
    rng = np.random.default_rng(0)
    x = rng.random((m, n), dtype=np.float32)
    expected = x.T.copy()
    d_out = cuda.device_array((n, m), dtype=np.float32)
    blocks, threads = launch_2d(m, n)
    kernel[blocks, threads](cuda.to_device(x), d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_sectors_per_warp(sectors_per_warp) -> bool:
    # The three cases the notebook asks to predict by hand: a row, a 37-column column, float64.
    expected = {(4, 4): 4, (148, 4): 32, (8, 8): 8}
    return all(bool(np.isclose(sectors_per_warp(s, e), v, rtol=1e-3)) for (s, e), v in expected.items())


def _allclose_transpose_tiled(kernel) -> bool:
    m, n, tile = 64, 96, 32                        # whole tiles, as textbook transpose tests have it
    rng = np.random.default_rng(0)
    x = rng.random((m, n), dtype=np.float32)
    expected = x.T.copy()
    d_out = cuda.device_array((n, m), dtype=np.float32)
    kernel[(n // tile, m // tile), (tile, 8)](cuda.to_device(x), d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_matmul_register_tiled(kernel) -> bool:
    m, k, n = 64, 16, 64                           # one 64 x 64 block, two tiles along K
    rng = np.random.default_rng(0)
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    expected = a @ b
    d_c = cuda.device_array((m, n), dtype=np.float32)
    kernel[(n // 64, m // 64), (8, 8)](cuda.to_device(a), cuda.to_device(b), d_c)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-3))

HARNESS = {"transpose_naive": _allclose_transpose_naive,
           "sectors_per_warp": _allclose_sectors_per_warp,
           "transpose_tiled": _allclose_transpose_tiled,
           "matmul_register_tiled": _allclose_matmul_register_tiled}
