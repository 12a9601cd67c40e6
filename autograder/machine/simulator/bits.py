"""libdevice in CPU mode: the bit casts, and a clear error for the rest.

On a GPU, ``numba.cuda.libdevice`` holds NVIDIA's device math library; in the simulator its
functions are empty stubs that return ``None``, so a kernel that calls one fails far from the call
(``int() argument must be ... not 'NoneType'``). While a simulated kernel runs, CPU mode puts a
module of its own where the kernel's module has ``libdevice`` (a module global, as the simulator
does for ``cuda``): the bit casts have a body there (a kernel that packs a float's bits into an
integer word, as chapter 11's single-pass scan does, runs the same way in both modes), and every
other function says what is missing and what to use. A kernel that reaches libdevice another way
(a closure variable, ``from numba.cuda.libdevice import ...``) still gets the simulator's stubs.
"""

from __future__ import annotations

import contextlib
import threading
import types
from collections import defaultdict

import numpy as np

_state = {"installed": False}


def _cast(dtype_in, dtype_out):
    def cast(x):
        return np.asarray(x).astype(dtype_in).reshape(()).view(dtype_out)[()]
    return cast


BIT_CASTS = {
    "float_as_int": _cast(np.float32, np.int32),
    "int_as_float": _cast(np.int32, np.float32),
    "double_as_longlong": _cast(np.float64, np.int64),
    "longlong_as_double": _cast(np.int64, np.float64),
}


def _hi(x):
    return np.int32(np.asarray(x, np.float64).reshape(()).view(np.int64)[()] >> 32)


def _lo(x):
    word = np.asarray(x, np.float64).reshape(()).view(np.int64)[()]
    return np.uint32(word & 0xFFFFFFFF).view(np.int32)


def _hilo(hi, lo):
    word = (np.int64(np.int32(hi)) << 32) | np.int64(np.int32(lo).view(np.uint32))
    return np.asarray(word, np.int64).reshape(()).view(np.float64)[()]


BIT_CASTS.update(double2hiint=_hi, double2loint=_lo, hiloint2double=_hilo)


def _missing(name: str):
    def call(*args):
        raise NotImplementedError(
            f"libdevice.{name} has no CPU-mode version (the simulator runs Python, not NVIDIA's "
            f"device library): use the math module's function, which compiles to libdevice on a "
            f"GPU, or run this kernel on a GPU")
    call.__name__ = name
    return call


class _CpuLibdevice(types.ModuleType):
    """What a simulated kernel sees for ``numba.cuda.libdevice``: the bit casts, and for any other
    name a function that says it has no CPU-mode version."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return BIT_CASTS.get(name) or _missing(name)


CPU_LIBDEVICE = _CpuLibdevice("libdevice (CPU mode)")

# The swap is per module, counted, as the simulator swaps ``cuda`` (kernelapi.swapped_cuda_module):
# the first call into a module swaps its globals, the last one out restores them, so the threads
# of a block calling one device function at once never see the real module half-way. Only a
# simulated call's module changes: the real ``numba.cuda.libdevice`` stays as it is for the
# compiler (the course compiles kernels to PTX in CPU mode too).
_lock = threading.Lock()
_entered: dict[int, int] = defaultdict(int)
_swapped: dict[int, list[str]] = {}


@contextlib.contextmanager
def swapped_libdevice(fn):
    """Inside, the globals of ``fn``'s module that are ``numba.cuda.libdevice`` are
    :data:`CPU_LIBDEVICE`."""
    from numba.cuda import libdevice
    namespace = getattr(fn, "__globals__", None)
    if namespace is None:
        yield
        return
    key = id(namespace)
    with _lock:
        if _entered[key] == 0:
            _swapped[key] = [k for k, v in namespace.items() if v is libdevice]
            for k in _swapped[key]:
                namespace[k] = CPU_LIBDEVICE
        _entered[key] += 1
    try:
        yield
    finally:
        with _lock:
            _entered[key] -= 1
            if _entered[key] == 0:
                for k in _swapped.pop(key, []):
                    namespace[k] = libdevice


def install() -> None:
    """Every simulated kernel and device function runs with :func:`swapped_libdevice` (once)."""
    if _state["installed"]:
        return
    from numba.cuda.simulator import kernel
    launch = kernel.FakeCUDAKernel.__call__

    def call(self, *args):
        with swapped_libdevice(getattr(self, "fn", None)):
            return launch(self, *args)

    kernel.FakeCUDAKernel.__call__ = call
    _state["installed"] = True
