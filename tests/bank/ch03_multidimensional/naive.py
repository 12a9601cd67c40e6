"""Naive allclose harnesses of ch03_multidimensional's exercises (see tests/bank/naive.py)."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

from bank.naive import launch_2d


def _allclose_rgb_to_gray(kernel) -> bool:
    h, w = 16, 24
    rng = np.random.default_rng(0)
    image = rng.random((h, w, 3), dtype=np.float32)
    expected = 0.299 * image[..., 0] + 0.587 * image[..., 1] + 0.114 * image[..., 2]
    d_gray = cuda.device_array((h, w), dtype=np.float32)
    blocks, threads = launch_2d(h, w)
    kernel[blocks, threads](cuda.to_device(image), d_gray)
    return bool(np.allclose(d_gray.copy_to_host(), expected, rtol=1e-3))


def _allclose_blur(kernel) -> bool:
    h, w, radius = 20, 30, 1
    rng = np.random.default_rng(0)
    image = rng.random((h, w), dtype=np.float32)
    expected = np.empty_like(image)
    for r in range(h):
        for c in range(w):
            expected[r, c] = image[max(r - radius, 0):r + radius + 1,
                                   max(c - radius, 0):c + radius + 1].mean()
    d_out = cuda.device_array((h, w), dtype=np.float32)
    blocks, threads = launch_2d(h, w)
    kernel[blocks, threads](cuda.to_device(image), d_out, radius)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_matmul_naive(kernel) -> bool:
    m, k, n = 16, 24, 20
    rng = np.random.default_rng(0)
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    expected = a @ b
    d_c = cuda.device_array((m, n), dtype=np.float32)
    blocks, threads = launch_2d(m, n)
    kernel[blocks, threads](cuda.to_device(a), cuda.to_device(b), d_c)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-3))


def _allclose_image_time_bound(image_time_bound) -> bool:
    # The two worked questions of the notebook, answers typed in to 4 digits, rtol = 1e-2.
    expected = {(12, 4): 1.119e-4, (4, 4): 5.593e-5}   # seconds, 4097 x 8191 at 4.8 TB/s
    return all(bool(np.isclose(image_time_bound(4097, 8191, b_in, b_out, 4.8e12), t, rtol=1e-2))
               for (b_in, b_out), t in expected.items())


HARNESS = {
    "rgb_to_gray": _allclose_rgb_to_gray,
    "blur": _allclose_blur,
    "matmul_naive": _allclose_matmul_naive,
    "image_time_bound": _allclose_image_time_bound,
}
