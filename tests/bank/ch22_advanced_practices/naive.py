"""Naive allclose harnesses for chapter 22's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. The pipeline's:
1,000 values from ``rng.random`` in pinned memory, 4 chunks over 2 streams, the answer compared
after the call (nothing about how the data moved). The batched kernel's: 4 problems of 10, 20,
30 and 40 elements (every length below the block of 64 it is launched with). The ILP kernel's:
1,024 elements, two blocks of 128 threads (a whole number of rounds)."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_pipeline(pipeline) -> bool:
    n = 1000
    rng = np.random.default_rng(0)
    x = cuda.pinned_array(n, np.float32)
    x[:] = rng.random(n).astype(np.float32)
    out = cuda.pinned_array(n, np.float32)
    out[:] = 0
    a, b = np.float32(2.0), np.float32(1.0)
    pipeline(x, out, a, b, 4, 2)
    cuda.synchronize()
    return bool(np.allclose(out, 2.0 * x + 1.0, rtol=1e-3))


def _allclose_batched(kernel) -> bool:
    lengths = np.array([10, 20, 30, 40])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rng = np.random.default_rng(0)
    x = rng.random(offsets[-1]).astype(np.float32)
    a = rng.random(4).astype(np.float32)
    b = rng.random(4).astype(np.float32)
    expected = np.repeat(a, lengths) * x + np.repeat(b, lengths)
    out = cuda.device_array(x.size, np.float32)
    kernel[4, 64](cuda.to_device(x), cuda.to_device(offsets), cuda.to_device(a),
                  cuda.to_device(b), out)
    return bool(np.allclose(out.copy_to_host(), expected, rtol=1e-3))


def _allclose_ilp(kernel) -> bool:
    n = 1024
    x = np.random.default_rng(0).random(n).astype(np.float32)
    a, b = np.float32(2.0), np.float32(1.0)
    out = cuda.device_array(n, np.float32)
    kernel[2, 128](cuda.to_device(x), out, a, b)
    return bool(np.allclose(out.copy_to_host(), 2.0 * x + 1.0, rtol=1e-3))


HARNESS = {"pipeline": _allclose_pipeline, "batched": _allclose_batched, "ilp": _allclose_ilp}
