"""Triton beside Numba: the course's arrays handed to a ``@triton.jit`` kernel, on a GPU and in
CPU mode.

Triton takes any argument with a ``data_ptr()`` method and a ``dtype`` as a pointer, so a kernel
does not need PyTorch tensors:

- **On an NVIDIA GPU** :func:`view` wraps a Numba device array in an object with the array's
  device address and dtype. Triton launches on the primary context's default stream when PyTorch
  is not loaded (the stream Numba's launches and CUDA events use), so the course's timing and
  checks see a Triton kernel as they see a Numba one.
- **In CPU mode** Triton runs its interpreter (``TRITON_INTERPRET=1``, which
  :func:`autograder.machine.device.select` sets before any kernel is decorated): every program of
  the grid runs in NumPy, about a millisecond each, so CPU-mode checks keep grids small. The
  interpreter expects PyTorch's tensor interface (it copies each tensor's storage to the host,
  runs on the copy, and copies it back); :class:`HostTensor` offers the ten members it uses over
  a NumPy array, and makes the host copy so that it ends just before a page the process may not
  touch: a load or store past the end of an array without a mask stops the process with a
  segmentation fault, as the same access faults on a GPU (:mod:`autograder.machine.fenced`), where
  a plain NumPy buffer would hand back whatever lies after it.

Triton installs from PyPI on Linux (x86-64 and Arm64) only; :func:`unavailable_reason` says so
elsewhere. Its interpreter is reached through duck typing, so the course pins Triton's minor
version and tests the interface in CI.
"""

from __future__ import annotations

import ctypes
import importlib.util
import mmap
import os
import platform

import numpy as np

INTERPRET_ENV = "TRITON_INTERPRET"
PAGE = mmap.PAGESIZE


def unavailable_reason() -> str | None:
    """Why Triton cannot run here, in words (None: it can)."""
    if importlib.util.find_spec("triton") is None:
        if platform.system() == "Linux" and platform.machine() in ("x86_64", "aarch64"):
            return "Triton is not installed: pip install 'triton>=3.9,<3.10' (./aag installs it)"
        return (f"Triton publishes wheels for Linux (x86-64 and Arm64) only, not for "
                f"{platform.system()} {platform.machine()}: the Triton exercises need a Linux "
                "machine (or WSL on Windows); the Numba exercises run here as they are")
    return None


def interpret_in_cpu_mode() -> None:
    """Make ``@triton.jit`` build interpreted kernels (CPU mode; before any kernel is made)."""
    os.environ[INTERPRET_ENV] = "1"


# -- CPU mode: the interpreter's tensor interface over NumPy ---------------------------------------
_libc = None


def _mprotect(address: int, length: int, prot: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    if _libc.mprotect(address, length, prot) != 0:
        raise OSError(ctypes.get_errno(), "mprotect refused the guard page")


def fenced_bytes(nbytes: int) -> np.ndarray:
    """``nbytes`` of zeroed host memory (uint8) whose last byte is followed by a page that may not
    be read or written (Linux and macOS; elsewhere a plain buffer)."""
    pages = -(-max(nbytes, 1) // PAGE)
    region = mmap.mmap(-1, (pages + 1) * PAGE)
    start = ctypes.addressof(ctypes.c_char.from_buffer(region))
    try:
        _mprotect(start + pages * PAGE, PAGE, 0)          # PROT_NONE
    except (OSError, AttributeError):
        pass                                              # no mprotect: unfenced, still right
    # Kept alive by the array (the mmap's exported buffer): unmapped when it is collected.
    return np.frombuffer(region, np.uint8, count=nbytes, offset=pages * PAGE - nbytes)


# What the grader's data-flow recorder (autograder.grading.provenance) sees of the interpreter's
# copies, when it is recording: ``source(data)`` the bytes a host copy is made from (the real
# data behind an input the recorder hides from host code); ``copied(data, copy)`` a host copy
# made; ``copy_back(data, copy)`` before the copy is written back (False: not written back).
hooks: dict = {"source": None, "copied": None, "copy_back": None}


class _Storage:
    """A run of bytes, as the interpreter uses PyTorch's untyped storage."""

    def __init__(self, data: np.ndarray):
        self.data = data                     # uint8, one dimension

    def data_ptr(self) -> int:
        return int(self.data.ctypes.data)

    def cpu(self) -> "_Storage":
        """The copy the interpreter runs on: fenced after its last byte."""
        source = hooks["source"](self.data) if hooks["source"] else self.data
        copy = fenced_bytes(self.data.size)
        copy[...] = source
        if hooks["copied"]:
            hooks["copied"](self.data, copy)
        return _Storage(copy)

    def copy_(self, other: "_Storage") -> "_Storage":
        if hooks["copy_back"] is None or hooks["copy_back"](self.data, other.data) is not False:
            self.data[...] = other.data
        return self


class HostTensor:
    """A C-contiguous NumPy array (or a CPU-mode device array) offered to Triton's interpreter
    with the members of PyTorch's tensor it reads; writes through it reach the array."""

    def __init__(self, array: np.ndarray | None = None, dtype=None):
        if array is None:
            array = np.empty(0, dtype)
        if not array.flags.c_contiguous:
            raise ValueError("Triton kernels here take C-contiguous arrays: "
                             "np.ascontiguousarray(a) first")
        self._array = array
        self._storage = _Storage(array.reshape(-1).view(np.uint8))
        self._offset = 0
        self._shape = tuple(array.shape)
        self._strides = tuple(s // array.itemsize for s in array.strides)

    # what Triton reads
    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    def data_ptr(self) -> int:
        return self._storage.data_ptr() + self._offset * self._array.itemsize

    def untyped_storage(self) -> _Storage:
        return self._storage

    def cpu(self) -> "HostTensor":
        return self

    def new_empty(self, *shape, device=None) -> "HostTensor":
        return HostTensor(np.empty(shape[0] if len(shape) == 1 and isinstance(shape[0], tuple)
                                   else shape, self._array.dtype))

    def set_(self, storage: _Storage, offset: int, size, stride) -> "HostTensor":
        self._storage, self._offset = storage, int(offset)
        self._shape, self._strides = tuple(size), tuple(stride)
        return self

    def storage_offset(self) -> int:
        return self._offset

    def size(self, dim: int | None = None):
        return self._shape if dim is None else self._shape[dim]

    def stride(self, dim: int | None = None):
        return self._strides if dim is None else self._strides[dim]

    # what a learner's launcher reads
    @property
    def shape(self) -> tuple:
        return self._shape

    def numel(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64))

    def __repr__(self) -> str:
        return f"HostTensor(shape={self._shape}, dtype={self._array.dtype})"


# -- on a GPU: a Numba device array's address ------------------------------------------------------
def _without_pytorch() -> None:
    """On a GPU, let a Triton that asks PyTorch for the device and the stream (before 3.9) launch
    without it: where PyTorch is not loaded, its CUDA driver is made to ask Numba for the current
    device and its capability, and to launch on the legacy default stream (handle 0), the stream
    Numba's launches and the course's CUDA events use. Triton 3.9 does this itself. Once."""
    if _driver_set[0]:
        return
    _driver_set[0] = True
    import sys
    if "torch" in sys.modules:
        return
    from triton.backends.nvidia import driver as nvidia
    if "_get_current_stream" in vars(nvidia.CudaDriver):          # Triton 3.9 and later
        return
    from numba import cuda
    from triton.runtime import driver

    class NumbaCudaDriver(nvidia.CudaDriver):
        def __init__(self):                   # CudaDriver's, without GPUDriver's import of torch
            self.utils = nvidia.CudaUtils()
            self.launcher_cls = nvidia.CudaLauncher
            self.get_device_capability = lambda device=None: \
                tuple(cuda.get_current_device().compute_capability)
            self.get_current_stream = lambda device=None: 0
            self.get_current_device = lambda: cuda.get_current_device().id
            self.set_current_device = lambda device: None

    driver.set_active(NumbaCudaDriver())


_driver_set = [False]


class DeviceView:
    """A Numba device array as Triton sees a tensor: its address, dtype, shape and strides."""

    def __init__(self, array):
        info = array.__cuda_array_interface__
        self.array = array                       # kept alive while Triton uses its memory
        self._ptr = int(info["data"][0])
        self.dtype = np.dtype(array.dtype)
        self.shape = tuple(array.shape)
        self._strides = tuple(s // self.dtype.itemsize for s in array.strides)

    def data_ptr(self) -> int:
        return self._ptr

    def stride(self, dim: int | None = None):
        return self._strides if dim is None else self._strides[dim]

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return f"DeviceView(shape={self.shape}, dtype={self.dtype})"


def view(array):
    """``array`` (a Numba device array, a CPU-mode device array or a NumPy array) as an argument
    for a Triton kernel, sharing its memory."""
    if isinstance(array, (HostTensor, DeviceView)):
        return array
    if isinstance(array, np.ndarray):
        return HostTensor(array)
    host = getattr(array, "_ary", None)          # the CUDA simulator's device array
    if isinstance(host, np.ndarray):
        return HostTensor(host)
    if hasattr(array, "__cuda_array_interface__"):
        _without_pytorch()
        return DeviceView(array)
    raise TypeError(f"a Triton kernel takes arrays here, not {type(array).__name__}")
