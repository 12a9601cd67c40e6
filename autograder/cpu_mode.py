"""CPU mode: the CUDA simulator, wrapped so the course can add what it lacks.

Inside a simulated kernel, ``cuda`` is a ``FakeCUDAModule`` built per launch. The course wraps its
constructor once, so each launch's module gets the course's extensions: functions registered with
:func:`extension` that receive the fake module and may add attributes (warp
intrinsics build on the same hook; :mod:`autograder.races` records shared-memory accesses through it
and stops a launch with a race).
"""

from __future__ import annotations

from typing import Callable

_extensions: list[Callable[[object], None]] = []
_state = {"installed": False, "warp_size": 32}


def extension(fn: Callable[[object], None]) -> Callable[[object], None]:
    """Register ``fn(fake_cuda_module)``, run for every simulated launch."""
    _extensions.append(fn)
    return fn


def warp_size() -> int:
    return _state["warp_size"]


def install(warp_size: int = 32) -> None:
    _state["warp_size"] = warp_size
    if _state["installed"]:
        return
    from numba.cuda.simulator import kernelapi, kernel

    original = kernelapi.FakeCUDAModule.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        for ext in _extensions:
            ext(self)

    kernelapi.FakeCUDAModule.__init__ = __init__
    # The simulator's cuda.warpsize is fixed at 32; CPU mode makes it a parameter, so 64 can
    # stand for an AMD wavefront.
    kernelapi.FakeCUDAModule.warpsize = property(lambda self: _state["warp_size"])
    kernel.FakeCUDAModule = kernelapi.FakeCUDAModule
    _state["installed"] = True
    from . import races
    races.install()
