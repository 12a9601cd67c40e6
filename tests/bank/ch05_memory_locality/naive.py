"""Naive allclose harnesses of ch05_memory_locality's exercises (see tests/bank/naive.py)."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

from bank.naive import launch_2d


def _allclose_tiled_matmul(kernel) -> bool:
    m, k, n, tile = 16, 24, 32, 8
    rng = np.random.default_rng(0)
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    expected = a @ b
    d_c = cuda.device_array((m, n), dtype=np.float32)
    blocks, threads = launch_2d(m, n, (tile, tile))
    kernel[blocks, threads](cuda.to_device(a), cuda.to_device(b), d_c)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-3))


def _allclose_matmul_time_bound(matmul_time_bound) -> bool:
    side, peak, bandwidth = 4096, 67e12, 4.8e12
    expected = {1: 0.11455, 16: 0.0071723, 64: 0.0020513}   # seconds, from the worked example
    return all(bool(np.isclose(matmul_time_bound(side, side, side, tile, peak, bandwidth), t,
                               rtol=1e-3)) for tile, t in expected.items())


HARNESS = {
    "tiled_matmul": _allclose_tiled_matmul,
    "matmul_time_bound": _allclose_matmul_time_bound,
}
