"""Naive allclose harnesses for chapter 13's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose``. Written the way quick sorting
tests usually are: whole tiles, the first digit only (shift 0), keys below 2^28 ("random enough"),
the expected result from ``np.argsort`` of the keys, and for the scatter one tile per 16 keys with
every digit once."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`


def _allclose_local_sort(kernel) -> bool:
    rng = np.random.default_rng(0)
    n, threads = 64, 32                                   # two whole tiles
    keys = rng.integers(0, 1 << 28, n).astype(np.uint32)
    values = np.arange(n, dtype=np.uint32)
    expected_k, expected_v = keys.copy(), values.copy()
    counts = np.zeros((16, 2), np.int32)
    for b in range(2):
        d = keys[b * 32:(b + 1) * 32] & 15                 # shift 0
        order = np.argsort(d, kind="stable")
        expected_k[b * 32:(b + 1) * 32] = keys[b * 32:(b + 1) * 32][order]
        expected_v[b * 32:(b + 1) * 32] = values[b * 32:(b + 1) * 32][order]
        counts[:, b] = np.bincount(d, minlength=16)
    d_k, d_v = cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)
    d_c = cuda.device_array(32, np.int32)
    kernel[2, threads](cuda.to_device(keys), cuda.to_device(values), 0, d_k, d_v, d_c)
    return bool(np.allclose(d_k.copy_to_host(), expected_k)
                and np.allclose(d_v.copy_to_host(), expected_v)
                and np.allclose(d_c.copy_to_host(), counts.reshape(-1)))


def _allclose_scatter(kernel) -> bool:
    rng = np.random.default_rng(0)
    threads, blocks = 16, 2                                # every digit once per tile
    digit = np.concatenate([rng.permutation(16), rng.permutation(16)])
    keys = (rng.integers(0, 1 << 20, 32) * 16 + digit).astype(np.uint32)
    values = np.arange(32, dtype=np.uint32)
    tile_k, tile_v = keys.copy(), values.copy()
    for b in range(blocks):                                # each tile sorted by its digit
        order = np.argsort(digit[b * 16:(b + 1) * 16])
        tile_k[b * 16:(b + 1) * 16] = keys[b * 16:(b + 1) * 16][order]
        tile_v[b * 16:(b + 1) * 16] = values[b * 16:(b + 1) * 16][order]
    counts = np.ones(16 * blocks, np.int32)
    offsets = np.arange(16 * blocks, dtype=np.int32)
    expected = np.argsort(tile_k & 15, kind="stable")
    d_k, d_v = cuda.device_array(32, np.uint32), cuda.device_array(32, np.uint32)
    kernel[blocks, threads](cuda.to_device(tile_k), cuda.to_device(tile_v), 0,
                            cuda.to_device(counts), cuda.to_device(offsets), d_k, d_v)
    return bool(np.allclose(d_k.copy_to_host(), tile_k[expected])
                and np.allclose(d_v.copy_to_host(), tile_v[expected]))


def _allclose_sort(radix_sort) -> bool:
    rng = np.random.default_rng(0)
    n = 64
    keys = rng.integers(0, 1 << 28, n).astype(np.uint32)
    values = np.arange(n, dtype=np.uint32)
    order = np.argsort(keys, kind="stable")
    d_k, d_v = cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)
    radix_sort(cuda.to_device(keys), cuda.to_device(values), d_k, d_v, 32)
    return bool(np.allclose(d_k.copy_to_host(), keys[order])
                and np.allclose(d_v.copy_to_host(), values[order]))


def _allclose_time_bound(radix_time_bound) -> bool:
    # The notebook's worked numbers for 2^28 pairs at 4.8 TB/s, typed in to 4 digits: tiles of
    # 256 at 4 and 8 bits, tiles of 2048 at 8 bits.
    big = 1 << 28
    cases = [((4, 256), 14.88e-3), ((8, 256), 11.63e-3), ((8, 2048), 7.716e-3)]
    return all(bool(np.isclose(radix_time_bound(big, bits, tile, 4.8e12), t, rtol=1e-3))
               for (bits, tile), t in cases)


HARNESS = {"radix_local_sort": _allclose_local_sort,
           "radix_scatter": _allclose_scatter,
           "radix_sort": _allclose_sort,
           "radix_time_bound": _allclose_time_bound}
