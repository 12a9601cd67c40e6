"""What chapter 5's notebook uses beyond the checks: :func:`with_tile`, the learner's tiled
kernel compiled again for another tile side, so that one kernel can be timed at TILE = 8, 16 and
32 without copying its code three times."""

from __future__ import annotations

import types

from autograder.problems.ch05.references import TILES


def with_tile(kernel, tile: int):
    """``kernel`` (a ``@cuda.jit`` function that reads the module constant ``TILE``) as a new
    kernel compiled with ``TILE = tile``: the same Python code with its own copy of the notebook's
    names, ``TILE`` changed there only (the notebook's ``TILE`` and ``kernel`` stay as they are).
    Numba reads a global when it compiles a kernel, so the copy's shared tiles are tile × tile;
    launch it with blocks of (tile, tile) threads."""
    from numba import cuda
    if tile not in TILES:
        raise ValueError(f"tile must be one of {TILES} (a block of tile² threads, at most 1024)")
    fn = kernel.py_func
    names = dict(fn.__globals__, TILE=tile)
    copy = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, fn.__closure__)
    return cuda.jit(copy)
