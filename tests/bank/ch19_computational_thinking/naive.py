"""Naive allclose harnesses for chapter 19's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick N-body tests usually are: 64 bodies with positions and masses from ``rng.random`` (all in
[0, 1)), eps2 = 0.01, the expected accelerations from NumPy loops computed first; the tiled
kernel in one block of 64 threads (a whole tile, as textbook tests have it)."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

N = 64


def _system():
    rng = np.random.default_rng(0)
    pos = rng.random((N, 3)).astype(np.float32)
    mass = rng.random(N).astype(np.float32)
    eps2 = np.float32(0.01)
    p = pos.astype(np.float64)
    expected = np.zeros((N, 3))
    for i in range(N):
        d = p - p[i]
        r2 = (d * d).sum(axis=1) + float(eps2)
        expected[i] = (d * (mass / r2 ** 1.5)[:, None]).sum(axis=0)
    return pos, mass, eps2, expected


def _run(kernel, threads) -> bool:
    pos, mass, eps2, expected = _system()
    d_acc = cuda.device_array((N, 3), np.float32)
    kernel[(N + threads - 1) // threads, threads](cuda.to_device(pos), cuda.to_device(mass), eps2,
                                                  d_acc)
    return bool(np.allclose(d_acc.copy_to_host(), expected, rtol=1e-3))


def _allclose_gather(kernel) -> bool:
    return _run(kernel, 32)


def _allclose_tiled(kernel) -> bool:
    return _run(kernel, 64)


def _allclose_bound(fn) -> bool:
    # The notebook's worked question, typed in: the speed test's step on the course's H200.
    got = fn(100_003, 256, 66.908e12, 4269e9)
    return bool(np.allclose(got, (2.000e11, 1.600e11, 6.280e8, 3.748e-2, 2.989e-3), rtol=1e-2))


HARNESS = {"nbody_gather": _allclose_gather, "nbody_tiled": _allclose_tiled,
           "nbody_bound": _allclose_bound}
