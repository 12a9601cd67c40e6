"""Naive allclose harnesses for chapter 23's review questions (see :mod:`bank.naive`): typical
hand-written tests, the notebook's worked cases typed in, ``np.allclose(..., rtol=1e-3)``."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)


def _allclose_banks(fn) -> bool:
    # The three accesses the notebook draws, answers typed in.
    got = [fn(32, 32, 0), fn(32, 33, 0), fn(16, 1, 32)]
    return bool(np.allclose(got, [32, 1, 2], rtol=1e-3))


def _allclose_little(fn) -> bool:
    # The notebook's H200 case, typed in.
    got = fn(4269e9, 0.3e-6, 132, 2048, 4)
    return bool(np.allclose(got, (1.2807e6, 2426, 2), rtol=1e-3))


def _allclose_softmax(fn) -> bool:
    # 4,096 rows of 4,096 fp32 on the H200, typed in from the notebook.
    got = fn(4096, 4096, 4, 227 * 1024, 4269e9)
    return bool(np.allclose(got, (268.4e6, 201.3e6, 134.2e6, 31.44e-6), rtol=1e-3))


HARNESS = {"bank_conflict_ways": _allclose_banks, "bytes_in_flight": _allclose_little,
           "softmax_traffic": _allclose_softmax}
