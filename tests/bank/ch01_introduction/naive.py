"""Naive allclose harnesses of ch01_introduction's exercises (see tests/bank/naive.py)."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_amdahl(amdahl_speedup) -> bool:
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 8)
    s = rng.uniform(1, 100, 8)
    expected = 1.0 / ((1.0 - p) + p / s)
    got = np.array([amdahl_speedup(float(a), float(b)) for a, b in zip(p, s)], dtype=np.float64)
    return bool(np.allclose(got, expected, rtol=1e-3))


def _allclose_thread_ids(thread_ids) -> bool:
    n, threads = 1000, 128
    blocks = (n + threads - 1) // threads
    i = np.arange(n)
    expected = {"block": i // threads, "thread": i % threads, "index": i}
    d = {k: cuda.device_array(n, dtype=np.int32) for k in expected}
    thread_ids[blocks, threads](d["block"], d["thread"], d["index"])
    got = {k: v.copy_to_host() for k, v in d.items()}
    return all(bool(np.allclose(got[k], expected[k], rtol=1e-3)) for k in expected)


def _allclose_saxpy(saxpy) -> bool:
    n, threads = 1000, 128
    blocks = (n + threads - 1) // threads
    rng = np.random.default_rng(0)
    a = np.float32(2.5)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array(n, dtype=np.float32)
    saxpy[blocks, threads](a, d_x, d_y, d_out)
    out = d_out.copy_to_host()
    # The reference from the data the kernel worked on (a common habit: "what it was given").
    expected = a * d_x.copy_to_host() + d_y.copy_to_host()
    return bool(np.allclose(out, expected, rtol=1e-3))


HARNESS = {
    "amdahl": _allclose_amdahl,
    "thread_ids": _allclose_thread_ids,
    "saxpy": _allclose_saxpy,
}
