"""CPU mode: the CUDA simulator, wrapped so the course can add what it lacks.

Inside a simulated kernel, ``cuda`` is a ``FakeCUDAModule`` built per launch. The course wraps its
constructor once, so each launch's module gets the course's extensions: functions registered with
:func:`extension` that receive the fake module and may add attributes (warp
intrinsics build on the same hook; :mod:`autograder.races` records shared-memory accesses through it
and stops a launch with a race).

The warp size is a parameter (32 by default; 64 stands for an AMD wavefront): ``cuda.warpsize``,
``cuda.laneid``, the grouping of threads into warps, the width of warp masks and every warp
intrinsic of :mod:`autograder.warp` follow it. ``with warp_size_as(64):`` runs the launches inside
it at another warp size, for checks that try a kernel at 32 and at 64.

A simulated launch runs on one core (:func:`one_core`): its block's threads take turns holding
Python's global lock at every barrier and warp step, and handing that lock from core to core costs
more than the work (a warp-shuffle check took 11 s on two cores, 4 s on one).
"""

from __future__ import annotations

import contextlib
import os
from typing import Callable

_extensions: list[Callable[[object], None]] = []
_state = {"installed": False, "warp_size": 32}


def extension(fn: Callable[[object], None]) -> Callable[[object], None]:
    """Register ``fn(fake_cuda_module)``, run for every simulated launch."""
    _extensions.append(fn)
    return fn


def dim_text(t) -> str:
    """A thread's or block's index in messages: ``(3, 1)`` for a 2-D one, ``5`` for a 1-D one."""
    t = tuple(t)
    while len(t) > 1 and t[-1] == 0:
        t = t[:-1]
    return f"({', '.join(map(str, t))})" if len(t) > 1 else str(t[0])


def warp_size() -> int:
    return _state["warp_size"]


def _valid(size: int) -> int:
    size = int(size)
    if size < 1 or size > 64 or size & (size - 1):
        raise ValueError(f"the warp size must be a power of two from 1 to 64, not {size}")
    return size


@contextlib.contextmanager
def warp_size_as(size: int):
    """Run the simulated launches inside the block at warp size ``size``, then restore it."""
    previous, _state["warp_size"] = _state["warp_size"], _valid(size)
    try:
        yield size
    finally:
        _state["warp_size"] = previous


def _sched_getcpu() -> Callable[[], int] | None:
    """C's ``sched_getcpu`` (looked up once, on the first simulated launch), or None."""
    if "sched_getcpu" not in _state:
        try:
            import ctypes
            _state["sched_getcpu"] = ctypes.CDLL(None).sched_getcpu
        except (OSError, AttributeError):
            _state["sched_getcpu"] = None
    return _state["sched_getcpu"]


def _current_core(allowed: set[int]) -> int:
    """The core this thread runs on now (the scheduler's choice), else one of ``allowed``."""
    getcpu = _sched_getcpu()
    core = int(getcpu()) if getcpu else -1
    return core if core in allowed else sorted(allowed)[os.getpid() % len(allowed)]


@contextlib.contextmanager
def one_core():
    """Run the code inside on the core the calling thread is on; the threads it starts (a
    simulated block's) inherit that. Affinity is restored after. No effect where there is one core
    or the system has no affinity calls."""
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        allowed = set()
    if len(allowed) <= 1:
        yield
        return
    os.sched_setaffinity(0, {_current_core(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def _refuse_an_empty_launch(grid, block) -> None:
    """A launch of no block or no thread runs nothing in the simulator, silently (and the cell then
    prints whatever the output array held); a GPU refuses it (CUDA_ERROR_INVALID_VALUE). Say so,
    and why it usually happens."""
    if grid is None or block is None:
        return                          # the simulator's own error about a missing configuration
    # both are (x, y, z) already: the simulator normalizes them when the launch is configured
    if 0 in grid or 0 in block:
        what = "0 blocks" if 0 in grid else "blocks of 0 threads"
        raise ValueError(
            f"launched {what} (grid {grid}, block {block}): nothing runs, and a GPU refuses "
            "such a launch. A grid of n // threads is 0 when n < threads: round up, "
            "(n + threads - 1) // threads.")


def install(warp_size: int = 32) -> None:
    _state["warp_size"] = _valid(warp_size)
    if _state["installed"]:
        return
    from numba.cuda.simulator import kernelapi, kernel

    original = kernelapi.FakeCUDAModule.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        for ext in _extensions:
            ext(self)

    kernelapi.FakeCUDAModule.__init__ = __init__
    launch = kernel.FakeCUDAKernel.__call__

    def call(self, *args):
        _refuse_an_empty_launch(self.grid_dim, self.block_dim)
        with one_core():
            return launch(self, *args)

    kernel.FakeCUDAKernel.__call__ = call
    # The simulator's cuda.warpsize is fixed at 32; CPU mode makes it a parameter, so 64 can
    # stand for an AMD wavefront.
    kernelapi.FakeCUDAModule.warpsize = property(lambda self: _state["warp_size"])
    kernel.FakeCUDAModule = kernelapi.FakeCUDAModule
    _state["installed"] = True
