"""Naive allclose harnesses for chapter 21's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick tests of these usually are: 64 curves with control points from ``rng.random`` (all in
[0, 1)), the expected values from NumPy computed first; tessellations with blocks of 32 threads
(one pass over a curve of at most 32 points, as a block of a warp per curve is usually launched);
64 uniform points for the quadtree, capacity 4, depth at most 4."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

N = 64


def _curves():
    rng = np.random.default_rng(0)
    cp = rng.random((N, 3, 2)).astype(np.float32)
    p = cp.astype(np.float64)
    mid = p[:, 1] - 0.5 * (p[:, 0] + p[:, 2])
    chord = p[:, 2] - p[:, 0]
    c = np.hypot(mid[:, 0], mid[:, 1]) / np.hypot(chord[:, 0], chord[:, 1])
    counts = np.clip(np.minimum(c * 16, 32).astype(np.int64), 4, 32)
    return cp, counts


def _allclose_counts(kernel) -> bool:
    cp, expected = _curves()
    d_counts = cuda.device_array(N, np.int32)
    kernel[2, 32](cuda.to_device(cp), d_counts)
    return bool(np.allclose(d_counts.copy_to_host(), expected))


def _allclose_tessellate(tessellate) -> bool:
    cp, counts = _curves()
    expected = []
    for i in range(N):
        u = np.arange(counts[i]) / (counts[i] - 1)
        p = cp[i].astype(np.float64)
        expected.append(((1 - u) ** 2)[:, None] * p[0] + (2 * u * (1 - u))[:, None] * p[1]
                        + (u * u)[:, None] * p[2])
    expected = np.concatenate(expected)
    d_points = cuda.device_array(expected.shape, np.float32)
    tessellate(cuda.to_device(cp), cuda.to_device(counts.astype(np.int32)), d_points, 32)
    return bool(np.allclose(d_points.copy_to_host(), expected, rtol=1e-3))


def _quadtree_expected(x, y, capacity, max_depth):
    leaf = np.ones(x.size, np.int64)
    for d in range(max_depth):
        first = 4 ** d
        active = leaf >= first
        table = np.bincount(leaf[active] - first, minlength=first)
        split = active.copy()
        split[active] = table[leaf[active] - first] > capacity
        q = (np.floor(x * 2 ** (d + 1)).astype(np.int64) & 1) + \
            2 * (np.floor(y * 2 ** (d + 1)).astype(np.int64) & 1)
        leaf[split] = 4 * leaf[split] + q[split]
    return leaf


def _allclose_quadtree(build) -> bool:
    rng = np.random.default_rng(0)
    x = rng.random(N).astype(np.float32)
    y = rng.random(N).astype(np.float32)
    expected = _quadtree_expected(x.astype(np.float64), y.astype(np.float64), 4, 4)
    d_leaf = cuda.device_array(N, np.int32)
    build(cuda.to_device(x), cuda.to_device(y), 4, 4, d_leaf, cuda.device_array(64, np.int32), 32)
    return bool(np.allclose(d_leaf.copy_to_host(), expected))


HARNESS = {"tess_counts": _allclose_counts, "tessellate": _allclose_tessellate,
           "quadtree": _allclose_quadtree}
