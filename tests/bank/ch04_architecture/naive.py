"""Naive allclose harnesses for chapter 4's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

# ---- chapter 4 (add to _HARNESS: "peak_figures", "divergent", "uniform", "occupancy") ---------

def _allclose_peak_figures(peak_figures) -> bool:
    # The chapter's H200-like device, the answers typed in from the notebook's worked numbers.
    flops, bandwidth = peak_figures(132, 128, 1_980_000, 3_125_000, 6144)
    return bool(np.isclose(flops, 66.9e12, rtol=1e-3) and np.isclose(bandwidth, 4.8e12, rtol=1e-3))


def _two_kinds_case(n=1000):
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32) * 2 - 1
    kind = (rng.random(n) < 0.5).astype(np.uint8)
    a = rng.random(8, dtype=np.float32)
    b = (rng.random(5, dtype=np.float32) - 0.5) * np.float32(0.8)
    expected = np.where(kind == 0, np.polyval(a, x), np.prod(1 + np.outer(x, b), axis=1))
    return x, kind, a, b, expected


def _allclose_divergent(kernel) -> bool:
    x, kind, a, b, expected = _two_kinds_case()
    d_out = cuda.device_array(x.size, dtype=np.float32)
    kernel[(x.size + 127) // 128, 128](cuda.to_device(x), cuda.to_device(kind), cuda.to_device(a),
                                       cuda.to_device(b), d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_uniform(kernel) -> bool:
    x, kind, a, b, expected = _two_kinds_case()
    order = np.argsort(kind, kind="stable").astype(np.int32)
    d_out = cuda.device_array(x.size, dtype=np.float32)
    kernel[(x.size + 127) // 128, 128](cuda.to_device(x[order]), cuda.to_device(kind[order]),
                                       cuda.to_device(order), cuda.to_device(a), cuda.to_device(b),
                                       d_out)
    return bool(np.allclose(d_out.copy_to_host(), expected, rtol=1e-3))


def _allclose_occupancy(occupancy) -> bool:
    h200 = dict(warp_size=32, max_threads_per_sm=2048, max_blocks_per_sm=32, regs_per_sm=65536,
                reg_alloc_unit=256, sub_partitions=4, smem_per_sm=233472, smem_alloc_unit=128,
                smem_reserved_per_block=1024)
    expected = {(256, 32, 0): (8, 1.0), (256, 64, 0): (4, 0.5), (256, 40, 20000): (6, 0.75)}
    return all(bool(np.allclose(occupancy(*args, h200), want, rtol=1e-3))
               for args, want in expected.items())


HARNESS = {"peak_figures": _allclose_peak_figures, "divergent": _allclose_divergent,
           "uniform": _allclose_uniform, "occupancy": _allclose_occupancy}
