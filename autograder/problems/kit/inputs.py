"""Inputs and launch shapes several chapters' exercises share."""

from __future__ import annotations

import os

import numpy as np


def random_floats(rng: np.random.Generator, n: int, dtype=np.float32) -> np.ndarray:
    """Values with a random offset and a random scale (10^-3 .. 10^3), so neither a result of
    zeros nor a tolerance tuned to values near 1 can pass by accident."""
    scale = 10.0 ** rng.uniform(-3, 3)
    offset = rng.uniform(-2, 2) * scale
    return (offset + scale * rng.uniform(-1, 1, n)).astype(dtype)


def random_floats_fast(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 values like :func:`random_floats`, made in float32 throughout (for speed runs of
    2^28 elements, where float64 generation would take seconds per array)."""
    scale = np.float32(10.0 ** rng.uniform(-3, 3))
    offset = np.float32(rng.uniform(-2, 2)) * scale
    x = rng.random(n, dtype=np.float32)
    x *= np.float32(2) * scale
    x += offset - scale
    return x


def spread(rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
    """``values`` (an image, a volume) under a random scale (10^-3 .. 10^3) and offset, as float32:
    a tolerance tuned to values near 1, or a result of zeros, cannot pass by accident."""
    scale = 10.0 ** rng.uniform(-3, 3)
    offset = rng.uniform(-1, 1) * scale
    return (offset + scale * values.astype(np.float64)).astype(np.float32)


def grid_blocks(n: int, threads: int) -> int:
    """One thread per element: the smallest number of blocks that covers n."""
    return (n + threads - 1) // threads


def grid_over(rows: int, cols: int, block: tuple[int, int]) -> tuple[int, int]:
    """Blocks (x, y) covering a rows × cols output: x across the columns, y down the rows."""
    bx, by = block
    return ((cols + bx - 1) // bx, (rows + by - 1) // by)


def unravel(idx, shape):
    """Flat indices (any integer array) as a tuple of index arrays into ``shape``."""
    return np.unravel_index(np.asarray(idx, dtype=np.int64), shape)


def cores() -> int:
    return os.cpu_count() or 1
