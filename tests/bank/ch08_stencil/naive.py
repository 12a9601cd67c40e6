"""Naive allclose harnesses for chapter 8's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``.

    stencil_basic      12x12x12  c0 = 0.4, c1..c6 = 0.1 (symmetric: swapped neighbours pass),
                                 8 x 8 x 8 blocks, NumPy-slices expected first
    stencil_intensity  3         the chapter's worked numbers (8^3, 32^3, 16 x 16 x 34), rtol 1e-3
    stencil_tiled      12x12x12  the same volume, IN_TILE^3 = 8^3 blocks over 6^3 outputs
    stencil_coarsened  8x14x14   the same coefficients, one 16 x 16 block, one slab (gridDim.z = 1)
"""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _stencil_expected(x, c):
    out = x.copy()
    out[1:-1, 1:-1, 1:-1] = (c[0] * x[1:-1, 1:-1, 1:-1] + c[1] * x[1:-1, 1:-1, :-2]
                             + c[2] * x[1:-1, 1:-1, 2:] + c[3] * x[1:-1, :-2, 1:-1]
                             + c[4] * x[1:-1, 2:, 1:-1] + c[5] * x[:-2, 1:-1, 1:-1]
                             + c[6] * x[2:, 1:-1, 1:-1])
    return out


def _allclose_stencil(kernel, shape, blocks, threads) -> bool:
    rng = np.random.default_rng(0)
    x = rng.random(shape, dtype=np.float32)
    c = [np.float32(0.4)] + [np.float32(0.1)] * 6
    expected = _stencil_expected(x, c)
    d_out = cuda.device_array(shape, dtype=np.float32)
    kernel[blocks, threads](cuda.to_device(x), d_out, *c)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_stencil_basic(kernel) -> bool:
    return _allclose_stencil(kernel, (12, 12, 12), (2, 2, 2), (8, 8, 8))


def _allclose_stencil_tiled(kernel) -> bool:
    return _allclose_stencil(kernel, (12, 12, 12), (2, 2, 2), (8, 8, 8))


def _allclose_stencil_coarsened(kernel) -> bool:
    return _allclose_stencil(kernel, (8, 14, 14), (1, 1, 1), (16, 16))


def _allclose_stencil_intensity(stencil_intensity) -> bool:
    expected = {(8, 8, 8): 1.3711, (32, 32, 32): 2.6779, (16, 16, 34): 2.3419}
    return all(bool(np.isclose(stencil_intensity(*box), value, rtol=1e-3))
               for box, value in expected.items())


HARNESS = {"stencil_basic": _allclose_stencil_basic,
           "stencil_intensity": _allclose_stencil_intensity,
           "stencil_tiled": _allclose_stencil_tiled, "stencil_coarsened": _allclose_stencil_coarsened}
