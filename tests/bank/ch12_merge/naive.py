"""Naive allclose harnesses for chapter 12's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose``. Written the way quick merge
tests usually are: random floats, so no two keys are equal (ties never happen), the expected
output from ``np.sort`` / ``np.argsort`` of the concatenation, and for the tiled merge sizes that
are whole tiles."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _distinct_keys(m, n):
    rng = np.random.default_rng(0)
    return (np.sort(rng.random(m)).astype(np.float32),
            np.sort(rng.random(n)).astype(np.float32))


_kernels: dict = {}


def _allclose_co_rank(co_rank) -> bool:
    if id(co_rank) not in _kernels:
        @cuda.jit
        def evaluate(A, B, out):
            k = cuda.grid(1)
            if k < out.size:
                out[k] = co_rank(k, A, A.size, B, B.size)
        _kernels[id(co_rank)] = evaluate
    A, B = _distinct_keys(40, 30)
    both = np.concatenate([A, B])
    expected = np.concatenate([[0], np.cumsum(np.argsort(both) < A.size)])
    d_out = cuda.device_array(A.size + B.size + 1, np.int64)
    _kernels[id(co_rank)][1, 128](cuda.to_device(A), cuda.to_device(B), d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected))


def _allclose_merge(kernel, m, n, blocks, threads) -> bool:
    A, B = _distinct_keys(m, n)
    both = np.concatenate([A, B])
    d_C = cuda.device_array(m + n, np.float32)
    d_src = cuda.device_array(m + n, np.int32)
    kernel[blocks, threads](cuda.to_device(A), cuda.to_device(B), d_C, d_src)
    return bool(np.allclose(d_C.copy_to_host(), np.sort(both))
                and np.allclose(d_src.copy_to_host(), np.argsort(both)))


def _allclose_merge_basic(kernel) -> bool:
    return _allclose_merge(kernel, 200, 150, 2, 32)


def _allclose_merge_tiled(kernel) -> bool:
    return _allclose_merge(kernel, 256, 256, 2, 32)   # two segments of 4 whole tiles of 64


def _allclose_merge_time_bound(merge_time_bound) -> bool:
    # The chapter's worked cases (m = n = 2^27 at 4.8 TB/s, 0.4 µs, 270,336 threads), answers
    # typed in to 4 digits: the basic kernel at 4, 16 and 64 outputs per thread, then tiled.
    half = 1 << 27
    cases = [((4, 1.0, 4e-7), 5.976e-3), ((16, 1.0, 4e-7), 1.814e-3),
             ((64, 1.0, 4e-7), 7.680e-4), ((8, 2.0, 0.0), 8.948e-4)]
    return all(bool(np.isclose(merge_time_bound(half, half, e, reads, 4.8e12, lat, 270336), t,
                               rtol=1e-3)) for (e, reads, lat), t in cases)


HARNESS = {"co_rank": _allclose_co_rank,
           "merge_basic": _allclose_merge_basic,
           "merge_tiled": _allclose_merge_tiled,
           "merge_time_bound": _allclose_merge_time_bound}
