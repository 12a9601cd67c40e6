"""CPU baselines compiled with ``numba.njit`` on first use, so that importing a chapter costs
no compilation and a notebook that never times a baseline never compiles one."""

from __future__ import annotations

import functools
from typing import Callable


def njit_on_first_call(make: Callable[[], Callable]) -> Callable:
    """``make()`` returns an ``numba.njit`` function (it imports Numba itself); the result is a
    function that builds it on the first call and calls it::

        @njit_on_first_call
        def serial_add():
            import numba

            @numba.njit(cache=False)
            def add(x, y, out):
                for i in range(out.size):
                    out[i] = x[i] + y[i]
            return add

        serial_add(x, y, out)      # compiles once, then runs
    """
    built: list = []

    @functools.wraps(make)
    def call(*args, **kwargs):
        if not built:
            built.append(make())
        return built[0](*args, **kwargs)

    return call
