"""Launching a Numba kernel again with the same arrays, at the driver's cost.

Numba's launch, ``kernel[grid, block](*args)``, types every argument, finds the compiled overload,
turns each array into its fields (pointer, shape, strides) and builds a launch configuration, in
Python, on every call. On the H200's host that costs far more than a memory-bound kernel of a few
megabytes takes to run (``docs/benchmarks.md``, "Calling a kernel from Python"). A
:class:`BoundLaunch` does all of it once for given arrays and scalars; each call after that is one
``cuLaunchKernel`` through ctypes, with the scalars it was told may change written in place.

It holds no reference to the arrays, only their fields: the caller keeps them alive, and a cache of
bound launches (:class:`BoundLaunches`) may be keyed by the arrays' pointers and shapes (an array
freed and another made at the same address with the same shape has the same fields), or, for
Numba's device arrays, whose fields never change, by their identity. In CPU mode, or where
Numba's internals are not what this module expects, a bound launch is the ordinary launch
(``.fast`` is False and ``.why`` says why).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import weakref

_driver: dict = {}


def _driver_call(name: str, *argtypes):
    """libcuda's function ``name``, typed (looked up once)."""
    if name not in _driver:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("cuda") or "libcuda.so.1"), name)
        fn.restype = ctypes.c_int
        fn.argtypes = list(argtypes)
        _driver[name] = fn
    return _driver[name]


def _cu_launch_kernel():
    return _driver_call("cuLaunchKernel", ctypes.c_void_p, *[ctypes.c_uint] * 7,
                        *[ctypes.c_void_p] * 3)


def _cu_memset_d32():
    return _driver_call("cuMemsetD32Async", ctypes.c_uint64, ctypes.c_uint, ctypes.c_size_t,
                        ctypes.c_void_p)


def zero_words(a) -> None:
    """Set a device array of 4-byte elements to 0, queued on the default stream: one driver
    call (``cuMemsetD32Async``) on a GPU, a copy from the host in CPU mode."""
    import numpy as np
    from autograder.machine import device
    if np.dtype(a.dtype).itemsize != 4 or len(a.shape) != 1:
        raise ValueError("zero_words takes a one-dimensional array of 4-byte elements")
    if not device.current().is_gpu:
        a.copy_to_device(np.zeros(a.shape, a.dtype))
        return
    cai = a.__cuda_array_interface__
    if cai.get("strides") not in (None, (4,)):
        raise ValueError("zero_words takes a contiguous array (this one has strides)")
    count = 1
    for side in cai["shape"]:
        count *= int(side)
    status = _cu_memset_d32()(cai["data"][0], 0, count, None)
    if status != 0:
        raise RuntimeError(f"cuMemsetD32Async failed with CUDA error {status}")


def _dims(d) -> tuple[int, int, int]:
    d = (d,) if isinstance(d, int) else tuple(int(v) for v in d)
    return (d + (1, 1, 1))[:3]


class BoundLaunch:
    """``BoundLaunch(kernel, grid, block, *args, scalars=())``: call it to launch
    ``kernel[grid, block](*args)`` again. ``scalars`` names the positions of scalar arguments a
    later call may change: ``bound(base, epoch)`` writes those values, in that order, before the
    launch."""

    def __init__(self, kernel, griddim, blockdim, *args, scalars: tuple[int, ...] = ()):
        self._kernel, self._config = kernel, (griddim, blockdim)
        self._scalars = tuple(scalars)
        self._args = list(args)
        if self._try_bind(kernel, griddim, blockdim, args, scalars):
            self._args = None             # the fields are bound; no reference to the arrays

    def _try_bind(self, kernel, griddim, blockdim, args, scalars) -> bool:
        self.fast, self.why = False, ""
        from autograder.machine import device
        if not device.current().is_gpu:
            self.why = "CPU mode"
            return False
        try:
            compiled = kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
            params, where, retr = [], [], []
            for position, (ty, value) in enumerate(zip(compiled.argument_types, args)):
                fields: list = []
                compiled._prepare_args(ty, value, 0, retr, fields)
                where.append(len(params))
                for f in fields:
                    if isinstance(f, bool):
                        raise TypeError("a boolean argument (its width is the compiler's)")
                    params.append(ctypes.c_ssize_t(f) if isinstance(f, int) else f)
            if retr:
                raise TypeError("a host array argument (it would be copied back after the launch)")
            for position in scalars:
                if not isinstance(params[where[position]], ctypes._SimpleCData):
                    raise TypeError(f"argument {position} is not a scalar")
            handle = compiled._codelibrary.get_cufunc().handle
            self._handle = ctypes.c_void_p(int(handle))
        except Exception as why:          # Numba's internals moved: the ordinary launch
            self.why = f"{type(why).__name__}: {why}"
            return False
        self._params = params
        self._where = where
        self._pointers = (ctypes.c_void_p * max(len(params), 1))(
            *[ctypes.addressof(p) for p in params])
        self._grid, self._block = _dims(griddim), _dims(blockdim)
        self._launch = _cu_launch_kernel()
        self.fast = True
        return True

    def __call__(self, *values) -> None:
        if len(values) != len(self._scalars):
            raise TypeError(f"expected {len(self._scalars)} scalar value(s), got {len(values)}")
        if not self.fast:
            for position, value in zip(self._scalars, values):
                self._args[position] = value
            griddim, blockdim = self._config
            self._kernel[griddim, blockdim](*self._args)
            return
        for position, value in zip(self._scalars, values):
            self._params[self._where[position]].value = value
        g, b = self._grid, self._block
        status = self._launch(self._handle, g[0], g[1], g[2], b[0], b[1], b[2], 0, None,
                              self._pointers, None)
        if status != 0:
            raise RuntimeError(f"cuLaunchKernel failed with CUDA error {status}")


def array_key(a) -> tuple:
    """What a bound launch depends on for array ``a`` (a Numba device array or any object with a
    ``__cuda_array_interface__``): its address, shape, strides and type."""
    cai = a.__cuda_array_interface__
    return cai["data"][0], tuple(cai["shape"]), cai.get("strides"), cai["typestr"]


class BoundLaunches:
    """Bound launches kept by what they depend on: ``launches.launch(kernel, shape, *args)``
    launches ``kernel`` on ``shape()`` (``(grid, block)``, asked only when nothing is bound yet
    for these arrays) with ``args``, through the launch bound for the same kernel and arrays if
    there is one. ``scalars`` names the positions of arguments that change from call to call:
    they are not part of what a launch is kept by, and are written into it on each call. At most
    ``size`` are kept (then all are forgotten). In CPU mode every call is the ordinary launch.

    A Numba device array is known by its identity (its address and shape never change), checked
    through a weak reference, so a call does not build its ``__cuda_array_interface__``; any
    other array by :func:`array_key` (a PyTorch tensor's storage can be swapped in place)."""

    def __init__(self, size: int = 16):
        self.size = size
        self._bound: dict = {}

    def launch(self, kernel, shape, *args, scalars: tuple[int, ...] = ()) -> None:
        from autograder.machine import device
        if not device.current().is_gpu:
            grid, block = shape()
            kernel[grid, block](*args)
            return
        key, held = launch_key(kernel, args, scalars)
        entry = self._bound.get(key)
        if entry is not None and still_held(entry[1], held):
            bound = entry[0]
        else:
            grid, block = shape()
            bound = BoundLaunch(kernel, grid, block, *args, scalars=scalars)
            if bound.fast:
                if len(self._bound) >= self.size:
                    self._bound.clear()
                self._bound[key] = (bound, [weakref.ref(a) for a in held])
        bound(*(args[p] for p in scalars))


_numba_arrays: list = []


def _numba_array_type() -> type:
    if not _numba_arrays:
        from numba.cuda.cudadrv.devicearray import DeviceNDArrayBase
        _numba_arrays.append(DeviceNDArrayBase)
    return _numba_arrays[0]


def launch_key(kernel, args, scalars=()) -> tuple[tuple, list]:
    """(what a bound launch of ``kernel`` with ``args`` is kept by, the Numba device arrays among
    them, known by identity): the arguments at the positions ``scalars`` are left out."""
    numba_array = _numba_array_type()
    key, held = [id(kernel)], []
    for position, a in enumerate(args):
        if position in scalars:
            continue
        if isinstance(a, numba_array):
            key.append(id(a))
            held.append(a)
        elif getattr(type(a), "__cuda_array_interface__", None) is not None:
            key.append(array_key(a))
        else:
            key.append(a)
    return tuple(key), held


def still_held(refs: list, held: list) -> bool:
    """Are the arrays a launch was bound with (weak references) the ones given now? An array
    freed and another made with the same ``id`` is not."""
    return len(refs) == len(held) and all(ref() is a for ref, a in zip(refs, held))
