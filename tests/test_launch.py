"""Bound launches (`autograder.machine.launch`) and the course's sum, scan and histogram for code
outside the exercises, which use them: right answers in CPU mode (the ordinary launch) and on a
GPU (one cuLaunchKernel per call), scalars changed between calls, the same arrays called again,
other arrays of other sizes after them."""

from __future__ import annotations

import numpy as np
import pytest

import autograder as ag
from numba import cuda     # a module global: the simulator swaps it inside a launch
from autograder.machine.launch import BoundLaunch, launch_key, still_held, zero_words
from autograder.problems.ch09.references import histogram_on_device
from autograder.problems.ch10.references import sum_on_device
from autograder.problems.ch11.references import scan_on_device

GPU = ag.backend.is_gpu


@cuda.jit
def axpb(x, out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + b


def test_a_bound_launch_launches_with_its_scalars_changed():
    x = cuda.to_device(np.arange(40, dtype=np.float32))
    out = cuda.to_device(np.full(40, np.nan, np.float32))
    bound = BoundLaunch(axpb, 2, 32, x, out, np.float32(2), np.float32(1), scalars=(3,))
    assert bound.fast == GPU, bound.why
    bound(5.0)
    assert np.array_equal(out.copy_to_host(), 2 * np.arange(40) + 5)
    bound(-1.0)
    assert np.array_equal(out.copy_to_host(), 2 * np.arange(40) - 1)
    with pytest.raises(TypeError, match="1 scalar value"):
        bound()


def test_zero_words_zeroes_and_refuses_what_it_cannot_zero():
    words = cuda.to_device(np.arange(5, dtype=np.uint32) + 1)
    zero_words(words)
    assert np.array_equal(words.copy_to_host(), np.zeros(5, np.uint32))
    with pytest.raises(ValueError, match="4-byte"):
        zero_words(cuda.to_device(np.ones(3, np.float64)))


SIZES = (1, 1000, 4097, 70_001) if not GPU else (1, 1000, 4097, 70_001, 3_000_017, 1 << 24)


def test_sum_scan_and_histogram_on_device():
    rng = np.random.default_rng(5)
    for n in SIZES:
        x = rng.uniform(-1, 1, n).astype(np.float32)
        dx = cuda.to_device(x)
        out = cuda.to_device(np.full(1, np.nan, np.float32))
        y = cuda.to_device(np.full(n, np.nan, np.float32))
        exact = np.cumsum(x.astype(np.float64))
        bound = 1e-6 * np.cumsum(np.abs(x.astype(np.float64))) + 1e-6 * np.sqrt(np.arange(n) + 1)
        for _ in range(3):            # again: bound once, called again with new epochs
            sum_on_device(dx, out)
            assert abs(out.copy_to_host()[0] - exact[-1]) <= 4 * bound[-1] + 1e-5, n
            scan_on_device(dx, y)
            assert np.all(np.abs(y.copy_to_host() - exact) <= 4 * bound + 1e-5), n
        data = rng.integers(0, 256, n).astype(np.uint8)
        hist = cuda.to_device(np.full(256, 9, np.uint32))
        for _ in range(2):
            histogram_on_device(cuda.to_device(data), hist)
            assert np.array_equal(hist.copy_to_host(), np.bincount(data, minlength=256)), n


def test_a_cache_of_bound_launches_knows_numba_arrays_by_identity_and_others_by_their_fields(
        monkeypatch):
    """Numba's device arrays are known by identity (checked by a weak reference, so an array
    freed and another made with the same id is not taken for it); any other array by its
    pointer, shape, strides and type; the per-call scalars are not part of the key."""
    import gc
    import weakref
    from autograder.machine import launch

    class DeviceArray:          # stands for Numba's device array type (none without a GPU)
        pass
    monkeypatch.setattr(launch, "_numba_arrays", [DeviceArray])

    def numba_array():
        return DeviceArray()

    class Tensor:               # an array known only by its __cuda_array_interface__
        def __init__(self, ptr):
            self.ptr = ptr

        @property
        def __cuda_array_interface__(self):
            return {"data": (self.ptr, False), "shape": (8,), "strides": None, "typestr": "<f4",
                    "version": 3}

    kernel = object()
    x, y = numba_array(), numba_array()
    key, held = launch_key(kernel, (x, y, 7), scalars=(2,))
    assert launch_key(kernel, (x, y, 9), scalars=(2,))[0] == key        # scalars left out
    assert launch_key(kernel, (y, x, 7), scalars=(2,))[0] != key
    assert launch_key(kernel, (x, y, 7))[0] != key                       # 7 is part of this one
    assert held == [x, y]
    refs = [weakref.ref(a) for a in held]
    assert still_held(refs, held)
    assert not still_held(refs, [x, numba_array()])
    del held, x
    gc.collect()
    assert refs[0]() is None and not still_held(refs, [numba_array(), y])
    a, b = Tensor(4096), Tensor(4096)
    assert launch_key(kernel, (a,))[0] == launch_key(kernel, (b,))[0]     # same fields
    assert launch_key(kernel, (a,))[0] != launch_key(kernel, (Tensor(8192),))[0]
    assert launch_key(kernel, (a,))[1] == []
