"""What a speed test's sample checks compute once per input array.

A speed test checks a sample of the output after each of its 23 timed calls, against inputs of up
to 2^28 values in three content sets. Where the expected values need the whole input (a sum, a
histogram, the prefix sums of a scan), that whole-input part is computed once per content set,
not once per call.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

import numpy as np


def once_per_array(fn: Callable[[np.ndarray], Any]) -> Callable[[np.ndarray], Any]:
    """``fn(x)``, computed once for each array ``x`` (by identity) while ``x`` lives: an entry goes
    when its array does, so the cache holds only what the running test's inputs need."""
    cache: dict[int, tuple[weakref.ref, Any]] = {}

    def forget(ref: weakref.ref, key: int) -> None:
        if key in cache and cache[key][0] is ref:
            del cache[key]

    @functools.wraps(fn)
    def cached(x: np.ndarray):
        key = id(x)
        hit = cache.get(key)
        if hit is not None and hit[0]() is x:
            return hit[1]
        value = fn(x)
        cache[key] = (weakref.ref(x, lambda ref, key=key: forget(ref, key)), value)
        return value

    cached.cache = cache   # for tests
    return cached
