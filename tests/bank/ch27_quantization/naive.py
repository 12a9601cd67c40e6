"""Naive allclose harnesses for chapter 27's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick quantised-matmul tests usually are: 64 output rows, K = 256 (a multiple of every block and
of the group), G = 32, int8 or int4 values from ``rng.integers``, scales of 0.01, x from
``rng.standard_normal`` in float16, 2 blocks of 64 threads (the Triton launcher picks its own
grid), the expected result from NumPy in float64 computed first."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

N, K, G, B = 64, 256, 32, 2


def _scales():
    return np.full((N, K // G), 0.01, np.float16)


def _allclose_int8(kernel) -> bool:
    rng = np.random.default_rng(0)
    q = rng.integers(-127, 128, (N, K)).astype(np.int8)
    x = rng.standard_normal(K).astype(np.float16)
    s = _scales()
    expected = (q * float(np.float16(0.01))) @ x.astype(np.float64)
    d_y = cuda.device_array(N, np.float32)
    kernel[2, 64](cuda.to_device(q), cuda.to_device(s), cuda.to_device(x), G, d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3, atol=1e-4))


def _int4_inputs():
    rng = np.random.default_rng(0)
    q = rng.integers(-8, 8, (N, K))
    nib = (q + 8).astype(np.uint8)
    packed = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)
    x = rng.standard_normal((B, K)).astype(np.float16)
    expected = x.astype(np.float64) @ (q * float(np.float16(0.01))).T
    return packed, _scales(), x, expected


def _allclose_int4(kernel) -> bool:
    packed, s, x, expected = _int4_inputs()
    d_y = cuda.device_array((B, N), np.float32)
    kernel[2, 64](cuda.to_device(packed), cuda.to_device(s), cuda.to_device(x), G, d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3, atol=1e-4))


def _allclose_int4_triton(launcher) -> bool:
    packed, s, x, expected = _int4_inputs()
    d_y = cuda.device_array((B, N), np.float32)
    launcher(cuda.to_device(packed), cuda.to_device(s), cuda.to_device(x), G, d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3, atol=1e-4))


def _allclose_quant_time_bound(quant_time_bound) -> bool:
    # The notebook's three questions (16384 x 8192 weights, one activation row, 4.8 TB/s),
    # answers typed in to 4 digits, rtol = 1e-2.
    expected = {(16, 0): 5.594e-5, (8, 128): 2.842e-5, (4, 128): 1.443e-5}     # seconds
    return all(bool(np.isclose(quant_time_bound(16384, 8192, 1, bits, g, 4.8e12), t, rtol=1e-2))
               for (bits, g), t in expected.items())


HARNESS = {"quant_time_bound": _allclose_quant_time_bound, "int8_matvec": _allclose_int8, "int4_matmul": _allclose_int4,
           "int4_matmul_triton": _allclose_int4_triton}
