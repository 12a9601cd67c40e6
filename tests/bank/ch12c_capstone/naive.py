"""Naive allclose harness for the capstone (see :mod:`bank.naive`): a typical hand-written test,
one fixed 24 × 40 image of uniform random bytes, the expected output from NumPy, ``np.allclose``."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_equalize(equalize) -> bool:
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (24, 40), dtype=np.uint8)
    cdf = np.cumsum(np.bincount(img.ravel(), minlength=256))
    cdf_min = cdf[img.min()]
    expected = (cdf[img] - cdf_min) / (img.size - cdf_min)
    d_out = cuda.device_array(img.shape, np.float32)
    equalize(cuda.to_device(img), d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


HARNESS = {"equalize": _allclose_equalize}
