"""Naive allclose harnesses for chapter 28's exercises (see :mod:`bank.naive`): the test a
multi-GPU programmer often writes first. For the ring: 4 ranks (simulated on this machine's one
device), buffers of 1024 values from ``rng.random`` (a multiple of the rank count and of every
block size), the expected sum from NumPy computed first, ``np.allclose`` on rank 0's buffer
only; nothing watches how the sum was made or whether the steps were ordered. For the bandwidth:
the worked example typed in."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from autograder.problems.ch28.ranks import Ranks


def _allclose_ring(fn) -> bool:
    x = np.random.default_rng(0).random((4, 1024)).astype(np.float32)
    expected = x.sum(axis=0)
    ranks = Ranks(list(x))
    fn(ranks)
    return bool(np.allclose(ranks.gather()[0], expected, rtol=1e-3))


def _allclose_bandwidth(fn) -> bool:
    # 1 GiB in 10 ms on 8 ranks: algbw 107.37 GB/s, busbw 187.90 GB/s
    return bool(np.allclose(fn(1 << 30, 0.01, 8), (107.374, 187.905), rtol=1e-3))


HARNESS = {"ring_allreduce": _allclose_ring, "bus_bandwidth": _allclose_bandwidth}
