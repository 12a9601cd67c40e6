"""Device copies of a check's inputs that end where mapped memory ends (NVIDIA GPUs only).

A kernel that reads one element past the end of an input usually gets away with it on a GPU:
``cudaMalloc`` hands out memory in large pieces, so the bytes after an array are mapped (another
array, or slack), the stray value is read and, when the kernel never uses it (a tail tile loaded
in full but summed only up to ``n``), every output is right. CPU mode catches such a read (the
simulator checks every index); a GPU check would pass it. So on an NVIDIA GPU the checks place
each input at the very end of a mapping made with the driver's virtual memory calls
(``cuMemAddressReserve``, ``cuMemCreate``, ``cuMemMap``), with an unmapped page after it: a read
past the array reaches an illegal address, and the kernel fails with
``CUDA_ERROR_ILLEGAL_ADDRESS`` as it would on the CPU with an ``IndexError``.

The array's start stays 16-byte aligned (kernels may load 8-byte pairs, as chapter 10's sum does;
a start that is only 4-byte aligned fails such a load with ``CUDA_ERROR_MISALIGNED_ADDRESS``), so
when its size is not a multiple of 16 bytes, up to 15 bytes lie between its end and the
unmapped page: they hold 0xFF bytes (NaN as a float), and a read there faults on the next
element. A tail tile read in full, as above, reaches the page.

Reads *before* an array's start are not fenced (the mapping's slack lies there, and a negative
index counts from the end, as in Python). Where the driver calls are not there (numba-hip, CPU
mode, an old driver), :func:`to_device` is ``cuda.to_device``. Speed tests never use it: timing
stays on ordinary allocations.
"""

from __future__ import annotations

import os

import numpy as np

OFF_ENV = "AAG_FENCE_INPUTS"   # 0: plain cuda.to_device copies (a way out if a driver refuses)
ALIGN = 16             # bytes: an input's start is a multiple of this
_STATE: dict = {}      # "driver": the bindings module, or "off": why the fence is not available


def _driver():
    """cuda.bindings' driver module where numba-cuda runs on NVIDIA's bindings, else None."""
    if "driver" in _STATE or "off" in _STATE:
        return _STATE.get("driver")
    try:
        if os.environ.get(OFF_ENV) == "0":
            raise RuntimeError(f"{OFF_ENV}=0")
        from autograder.machine import device
        if device.current().name != "cuda":
            raise RuntimeError(f"backend {device.current().name}")
        from cuda.bindings import driver as cu
        cu.cuMemAddressReserve, cu.cuMemCreate, cu.cuMemMap   # noqa: B018 (present?)
        _STATE["driver"] = cu
    except Exception as exc:   # no bindings, another backend: plain copies
        _STATE["off"] = f"{type(exc).__name__}: {exc}"
    return _STATE.get("driver")


def _ok(result):
    """A driver call's values, or RuntimeError with its error code."""
    err, *values = result
    if int(err) != 0:
        raise RuntimeError(f"CUDA driver error {err!r}")
    return values[0] if len(values) == 1 else values


class FencedBuffer:
    """One mapping of ``size`` bytes, a page of unmapped address space after it. The array's
    ``nbytes`` start at ``pointer``, the last 16-byte boundary from which they fit; freed when
    the last array using it is gone."""

    def __init__(self, cu, nbytes: int, ordinal: int):
        self._cu = cu
        prop = cu.CUmemAllocationProp()
        prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
        prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        prop.location.id = ordinal
        gran = int(_ok(cu.cuMemGetAllocationGranularity(
            prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
        self.size = -(-nbytes // gran) * gran
        self.reserved = self.size + gran                  # the last page is never mapped
        self.base = self.handle = None
        self.mapped = False
        try:
            self.base = _ok(cu.cuMemAddressReserve(self.reserved, gran, 0, 0))
            self.handle = _ok(cu.cuMemCreate(self.size, prop, 0))
            _ok(cu.cuMemMap(self.base, self.size, 0, self.handle, 0))
            self.mapped = True
            access = cu.CUmemAccessDesc()
            access.location.type = prop.location.type
            access.location.id = ordinal
            access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
            _ok(cu.cuMemSetAccess(self.base, self.size, [access], 1))
        except Exception:
            self.free()
            raise
        # The start keeps the alignment kernels may rely on (8-byte pair loads, as chapter 10's
        # sum does; cudaMalloc gives 256): so up to ALIGN - 1 bytes of slack may lie between the
        # array's end and the unmapped page. They hold 0xFF bytes (NaN as a float).
        self.pointer = (int(self.base) + self.size - nbytes) // ALIGN * ALIGN
        self.slack = int(self.base) + self.size - (self.pointer + nbytes)

    def free(self) -> None:
        cu = self._cu
        if self.mapped:
            cu.cuMemUnmap(self.base, self.size)
            self.mapped = False
        if self.handle is not None:
            cu.cuMemRelease(self.handle)
            self.handle = None
        if self.base is not None:
            cu.cuMemAddressFree(self.base, self.reserved)
            self.base = None

    def __del__(self):
        try:
            self.free()
        except Exception:   # interpreter shutdown: the driver frees it with the context
            pass


class _Interface:
    """What ``cuda.as_cuda_array`` needs: the array's description, and the buffer kept alive."""

    def __init__(self, buffer: FencedBuffer, shape, dtype, offset: int = 0):
        self.buffer = buffer
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "strides": None, "typestr": np.dtype(dtype).str,
            "data": (buffer.pointer + offset, False), "version": 3, "stream": None}


def to_device(host: np.ndarray):
    """A device copy of ``host`` that ends at most 15 bytes before an unmapped page (on an NVIDIA
    GPU, for a C-contiguous ``host``; elsewhere ``cuda.to_device(host)``)."""
    from numba import cuda
    cu = _driver()
    if cu is None or host.nbytes == 0 or not host.flags.c_contiguous:
        return cuda.to_device(host)      # (a strided input keeps its strides, as before)
    try:
        buffer = FencedBuffer(cu, host.nbytes, cuda.get_current_device().id)
    except Exception as exc:   # out of address space, refused: plain copies from now on
        _STATE.pop("driver", None)
        _STATE["off"] = f"{type(exc).__name__}: {exc}"
        return cuda.to_device(host)
    array = cuda.as_cuda_array(_Interface(buffer, host.shape, host.dtype), sync=False)
    array.copy_to_device(host)
    if buffer.slack:
        _fill_slack(buffer, host.nbytes)
    return array


def _fill_slack(buffer: FencedBuffer, nbytes: int) -> None:
    """0xFF in the bytes between the array's end and the unmapped page."""
    from numba import cuda
    tail = _Interface(buffer, (buffer.slack,), np.uint8, offset=nbytes)
    cuda.as_cuda_array(tail, sync=False).copy_to_device(np.full(buffer.slack, 0xFF, np.uint8))


def unavailable_reason() -> str | None:
    """Why inputs are not fenced here (None: they are, or no input was copied yet)."""
    return _STATE.get("off")
