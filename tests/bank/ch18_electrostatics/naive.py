"""Naive allclose harnesses for chapter 18's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick potential-map tests usually are: a 16 × 16 slice with h = 0.5 and ten atoms from
``rng.random``, blocks of 8 × 8 threads, the expected map from NumPy computed first."""

from __future__ import annotations

import math

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _atoms(n=10, extent=7.5):
    rng = np.random.default_rng(0)
    atoms = rng.random((n, 4)).astype(np.float32)
    atoms[:, :2] *= extent
    atoms[:, 2] += 1.0                     # above the plane z = 0
    atoms[:, 3] = atoms[:, 3] * 2 - 1
    return atoms


def _potential(atoms, ny, nx, h, cutoff=None):
    V = np.zeros((ny, nx))
    for j in range(ny):
        for i in range(nx):
            for x, y, z, q in atoms.astype(np.float64):
                r = math.sqrt((i * h - x) ** 2 + (j * h - y) ** 2 + z * z)
                if cutoff is None or r < cutoff:
                    V[j, i] += q / r
    return V


def _allclose_gather(kernel) -> bool:
    atoms = _atoms()
    expected = _potential(atoms, 16, 16, 0.5)
    d_V = cuda.device_array((16, 16), np.float32)
    kernel[(2, 2), (8, 8)](cuda.to_device(atoms), d_V, np.float32(0.5), np.float32(0.0))
    return bool(np.allclose(d_V.copy_to_host(), expected, rtol=1e-3))


def _allclose_coarsened(kernel) -> bool:
    # Coarsening by 2 over 16 columns: one block of 8 × 8 threads covers the row.
    atoms = _atoms()
    expected = _potential(atoms, 16, 16, 0.5)
    d_V = cuda.device_array((16, 16), np.float32)
    kernel[(1, 2), (8, 8)](cuda.to_device(atoms), d_V, np.float32(0.5), np.float32(0.0), 2)
    return bool(np.allclose(d_V.copy_to_host(), expected, rtol=1e-3))


def _allclose_cutoff(kernel) -> bool:
    # A cutoff of 2 and bins of 2 over the 8 × 8 area: 4 × 4 bins.
    atoms = _atoms(30)
    bins = np.clip(np.floor(atoms[:, :2] / 2.0).astype(int), 0, 3)
    order = np.argsort(bins[:, 1] * 4 + bins[:, 0], kind="stable")
    atoms = np.ascontiguousarray(atoms[order])
    counts = np.bincount((bins[:, 1] * 4 + bins[:, 0])[order], minlength=16)
    flat = np.concatenate([[0], np.cumsum(counts)])
    start = np.array([flat[r * 4:r * 4 + 5] for r in range(4)], np.int32)
    expected = _potential(atoms, 16, 16, 0.5, cutoff=2.0)
    d_V = cuda.device_array((16, 16), np.float32)
    kernel[(2, 2), (8, 8)](cuda.to_device(atoms), cuda.to_device(start), d_V, np.float32(0.5),
                           np.float32(0.0), np.float32(2.0), np.float32(2.0))
    return bool(np.allclose(d_V.copy_to_host(), expected, rtol=1e-3))


def _allclose_work(fn) -> bool:
    # The notebook's worked question, typed in: the measuring cell's slice, a cutoff of 12.
    got = fn(1024, 1024, 0.5, 10000, 12.0, 12.0)
    return bool(np.allclose(got, (1.05e10, 5.18e7, 0.349), rtol=1e-2))


HARNESS = {"dcs_gather": _allclose_gather, "dcs_coarsened": _allclose_coarsened,
           "dcs_cutoff": _allclose_cutoff, "binned_work": _allclose_work}
