"""Naive allclose harnesses for chapter 10's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``.

    reduce_tree        1000 uniform values in [0, 1), 128 threads per block, ceil(n / 256) blocks
    warp_sums          n = 1024 (whole warps, as such tests usually have), 128 threads per block,
                       at the default warp size (32)
    reduce_sum         10000 uniform values in [0, 1), 4 blocks of 128 threads
    reduce_time_bound  the chapter's three worked cases (2^28 values), typed in to 4 digits
"""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_sum(kernel, n, blocks, threads) -> bool:
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    d_out = cuda.to_device(np.zeros(1, np.float32))
    kernel[blocks, threads](cuda.to_device(x), d_out)
    return bool(np.allclose(d_out.copy_to_host()[0], x.sum(dtype=np.float64), rtol=1e-3))


def _allclose_reduce_tree(kernel) -> bool:
    return _allclose_sum(kernel, 1000, (1000 + 255) // 256, 128)


def _allclose_reduce_sum(kernel) -> bool:
    return _allclose_sum(kernel, 10_000, 4, 128)


def _allclose_warp_sums(kernel) -> bool:
    n = 1024
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    expected = x.reshape(-1, 32).sum(axis=1, dtype=np.float64)
    d_sums = cuda.to_device(np.zeros(n // 32, np.float32))
    kernel[n // 128, 128](cuda.to_device(x), d_sums)
    return bool(np.allclose(d_sums.copy_to_host(), expected, rtol=1e-3))


def _allclose_reduce_time_bound(reduce_time_bound) -> bool:
    n = 1 << 28
    cases = [((n // 512, 256, 1056, 4.8e12, 40e-9, 1e9), 5.243e-4),
             ((n // 4096, 256, 1056, 4.8e12, 40e-9, 1e9), 2.237e-4),
             ((528, 256, 1056, 4.8e12, 40e-9, 1e9), 2.237e-4)]
    return all(bool(np.isclose(reduce_time_bound(n, *args), t, rtol=1e-3)) for args, t in cases)


HARNESS = {"reduce_tree": _allclose_reduce_tree, "warp_sums": _allclose_warp_sums,
           "reduce_sum": _allclose_reduce_sum, "reduce_time_bound": _allclose_reduce_time_bound}
