"""Inputs and launch shapes several chapters' exercises share."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

# A speed run's inputs are made in this many pieces, each from its own generator: the values do not
# depend on how many threads make them, so the judge and the learner's process (and every machine)
# make the same ones.
PIECES = 64
PARALLEL_FROM = 1 << 20      # smaller arrays are made in one thread (starting threads costs more)


def random_floats(rng: np.random.Generator, n: int, dtype=np.float32) -> np.ndarray:
    """Values with a random offset and a random scale (10^-3 .. 10^3), so neither a result of
    zeros nor a tolerance tuned to values near 1 can pass by accident."""
    scale = 10.0 ** rng.uniform(-3, 3)
    offset = rng.uniform(-2, 2) * scale
    return (offset + scale * rng.uniform(-1, 1, n)).astype(dtype)


def in_parallel(fn: Callable[[int], Any], count: int, work: int) -> list:
    """``[fn(0), ..., fn(count - 1)]``, on up to one thread per core when ``work`` (elements in all)
    is large enough to pay for starting them. For NumPy work, which releases the GIL: the speed
    tests' inputs and sample checks go over 2^28 values, a second or more per pass in one thread."""
    workers = min(_usable_cores(), count) if work >= PARALLEL_FROM else 1
    if workers <= 1:
        return [fn(i) for i in range(count)]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, range(count)))


def piece_edges(n: int) -> list[int]:
    """Where :func:`parallel_fill`'s pieces of an n-element array begin, and the end."""
    return [int(n) * i // PIECES for i in range(PIECES + 1)]


def parallel_fill(rng: np.random.Generator, n: int,
                  fill: Callable[[np.random.Generator, np.ndarray], None],
                  dtype=np.float32) -> np.ndarray:
    """n values made by ``fill(generator, piece)`` over :data:`PIECES` pieces side by side, each
    piece from its own generator spawned from one draw of ``rng``."""
    n = int(n)
    seeds = np.random.SeedSequence(int(rng.integers(1 << 63))).spawn(PIECES)
    out = np.empty(n, dtype)
    edges = piece_edges(n)
    in_parallel(lambda i: fill(np.random.Generator(np.random.SFC64(seeds[i])),
                               out[edges[i]:edges[i + 1]]), PIECES, n)
    return out


def uniform_fast(rng: np.random.Generator, n: int, low: float = 0.0,
                 high: float = 1.0) -> np.ndarray:
    """n float32 values uniform in [low, high), made in parallel (:func:`parallel_fill`)."""
    width, low = np.float32(high - low), np.float32(low)

    def fill(g: np.random.Generator, piece: np.ndarray) -> None:
        g.random(out=piece, dtype=np.float32)
        piece *= width
        piece += low
    return parallel_fill(rng, n, fill)


def normal_fast(rng: np.random.Generator, n: int, mean: float = 0.0,
                std: float = 1.0) -> np.ndarray:
    """n float32 values from N(mean, std²), made in parallel (:func:`parallel_fill`)."""
    mean, std = np.float32(mean), np.float32(std)

    def fill(g: np.random.Generator, piece: np.ndarray) -> None:
        g.standard_normal(out=piece, dtype=np.float32)
        piece *= std
        piece += mean
    return parallel_fill(rng, n, fill)


def random_floats_fast(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 values like :func:`random_floats`, made in float32 throughout and in parallel (for
    speed runs of 2^28 elements, where float64 generation would take seconds per array)."""
    scale = 10.0 ** rng.uniform(-3, 3)
    offset = rng.uniform(-2, 2) * scale
    return uniform_fast(rng, n, offset - scale, offset + scale)


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
    """The machine's cores (what numba's parallel loops use: the CPU baselines' labels)."""
    return os.cpu_count() or 1


def _usable_cores() -> int:
    """The cores this thread may run on (a container or ``taskset`` may allow fewer)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return cores()
