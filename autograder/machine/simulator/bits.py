"""libdevice in CPU mode: the bit casts, and a clear error for the rest.

On a GPU, ``numba.cuda.libdevice`` holds NVIDIA's device math library; in the simulator its
functions are empty stubs that return ``None``, so a kernel that calls one fails far from the call
(``int() argument must be ... not 'NoneType'``). CPU mode gives the bit casts a body (a kernel that
packs a float's bits into an integer word, as chapter 11's single-pass scan does, runs the same
way in both modes) and makes every other libdevice function say what is missing and what to use.
"""

from __future__ import annotations

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


def install() -> None:
    """Give ``numba.cuda.libdevice`` its CPU-mode bodies (once)."""
    if _state["installed"]:
        return
    from numba.cuda import libdevice
    for name in dir(libdevice):
        fn = getattr(libdevice, name)
        if name.startswith("_") or not callable(fn) or getattr(fn, "__module__", "") != \
                libdevice.__name__:
            continue
        setattr(libdevice, name, BIT_CASTS.get(name) or _missing(name))
    _state["installed"] = True
