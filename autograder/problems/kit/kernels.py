"""Reference kernels compiled once per process, on first use, under the CUDA simulator's rule.

The CUDA simulator (CPU mode) gives each launch its own ``cuda`` module by swapping, for the
launch, every *module global* of the kernel's module whose value is ``numba.cuda``. A kernel that
reaches ``cuda`` as a closure variable or a local import would see the real module and fail.
So a module that defines reference kernels names ``cuda`` (and the Numba types its kernels use)
as module globals, bound to ``None`` until the first kernel is built::

    cuda = float32 = None            # module globals, bound by KernelCache on first use
    _kernels = KernelCache(globals(), "cuda", "float32")

    @_kernels.lazy
    def reference_gray():
        @cuda.jit
        def rgb_to_gray_reference(image, gray):
            ...
        return rgb_to_gray_reference

``reference_gray()`` builds the kernel once and returns the same one after. Nothing imports
``numba.cuda`` before the first build: a chapter imports before the course has chosen between
the GPU and the simulator.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Callable, Iterator

_NUMBA_CUDA = ("cuda",)


class KernelCache:
    def __init__(self, namespace: dict, *names: str):
        self._namespace = namespace
        self._names = names or _NUMBA_CUDA
        self._built: dict[str, object] = {}

    def bind(self) -> None:
        """Bind the declared names in the module: ``cuda`` to ``numba.cuda``, ``libdevice`` to
        ``numba.cuda.libdevice``, any other to the Numba attribute of that name (``float32``,
        ``int32``, ``void``...)."""
        import numba
        from numba import cuda
        from numba.cuda import libdevice
        for name in self._names:
            self._namespace[name] = {"cuda": cuda, "libdevice": libdevice}.get(name) \
                or getattr(numba, name)

    def get(self, key: str, make: Callable[[], object]):
        """The kernel built by ``make()`` under this key, built on the first call."""
        if key not in self._built:
            self.bind()
            self._built[key] = make()
        return self._built[key]

    def lazy(self, make: Callable[[], object]) -> Callable[[], object]:
        """``make`` as a function that builds its kernel once and returns it on every call."""
        @functools.wraps(make)
        def kernel():
            return self.get(make.__qualname__, make)
        return kernel

    def clear(self) -> None:
        self._built.clear()


def device_address(array) -> int | None:
    """The device address of an array's first element (None where it cannot be told)."""
    face = getattr(array, "__cuda_array_interface__", None)
    return face["data"][0] if face else None


def pairs_fit(*arrays) -> bool:
    """Whether these C-contiguous float32 arrays can be read as uint64 pairs of floats (8-byte
    loads and stores): every row an even number of floats, every array starting on an 8-byte
    boundary (the simulator has no alignment to respect)."""
    if any(tuple(a.shape)[-1] % 2 for a in arrays):
        return False
    from autograder.machine import device
    if not device.current().is_gpu:
        return True
    return all(address is not None and address % 8 == 0
               for address in (device_address(a) for a in arrays))


# ---- builds chosen at run time ------------------------------------------------------------------
# A launcher that picks its build from the arrays it is given (8-byte pairs where they fit, the
# scalar build elsewhere) says which one ran, so that ``aag bench`` can report which build its
# times are of: a row's label names the fast build, and a silent fallback would time another.

_chosen: list[list[str]] = []


def chose(build: str) -> None:
    """Record that a launcher ran ``build`` (kept only inside :func:`choices`)."""
    for record in _chosen:
        record.append(build)


@contextlib.contextmanager
def choices() -> Iterator[list[str]]:
    """``with choices() as chosen:``: ``chosen`` lists the builds launchers picked in the block."""
    record: list[str] = []
    _chosen.append(record)
    try:
        yield record
    finally:
        _chosen.remove(record)
