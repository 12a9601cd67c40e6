"""CPU mode's libdevice: the bit casts give a float's bits as an integer and back, as on a GPU;
every other libdevice function says it has no CPU-mode version instead of returning None."""

from __future__ import annotations

import numpy as np
import pytest

import autograder as ag
from numba import cuda     # module globals: the simulator swaps both inside a launch
from numba.cuda import libdevice

pytestmark = pytest.mark.skipif(ag.backend.is_gpu, reason="CPU mode's libdevice (on a GPU, "
                                "libdevice is NVIDIA's)")


def _libdevice():
    from autograder.machine.simulator.bits import CPU_LIBDEVICE
    return CPU_LIBDEVICE


@pytest.mark.parametrize("value", [1.0, -1.0, 0.0, -0.0, 3.5e-41, np.inf, -2.5, 1e30])
def test_float_bits_round_trip(value):
    L = _libdevice()
    bits = L.float_as_int(np.float32(value))
    assert bits == np.float32(value).view(np.int32)
    assert np.float32(L.int_as_float(bits)).tobytes() == np.float32(value).tobytes()


@pytest.mark.parametrize("value", [1.0, -3.25, -np.inf, 5e-324, 2.0 ** 60])
def test_double_bits_round_trip(value):
    L = _libdevice()
    bits = L.double_as_longlong(np.float64(value))
    assert bits == np.float64(value).view(np.int64)
    assert L.longlong_as_double(bits) == np.float64(value)
    hi, lo = L.double2hiint(np.float64(value)), L.double2loint(np.float64(value))
    words = np.float64(value).reshape(1).view(np.int32)      # little-endian: low word first
    assert (hi, lo) == (words[1], words[0])
    assert L.hiloint2double(hi, lo) == np.float64(value)


def test_a_kernel_packs_a_float_into_a_word():
    @cuda.jit
    def pack(x, words):
        i = cuda.grid(1)
        if i < x.size:
            words[i] = (np.uint64(7) << np.uint64(32)) | (np.uint64(libdevice.float_as_int(x[i]))
                                                          & np.uint64(0xFFFFFFFF))

    x = np.array([1.5, -2.0, 0.0], np.float32)
    words = np.zeros(3, np.uint64)
    pack[1, 32](x, words)
    assert np.array_equal(words >> np.uint64(32), [7, 7, 7])
    assert np.array_equal((words & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32), x)


def test_other_functions_say_they_are_missing():
    @cuda.jit
    def fast(x):
        x[0] = libdevice.fast_expf(x[0])

    with pytest.raises(Exception, match="libdevice.fast_expf has no CPU-mode"):
        fast[1, 1](np.ones(1, np.float32))


def test_the_real_libdevice_is_left_for_the_compiler():
    """Outside a simulated call the module is NVIDIA's (stubs here): the compiler that turns
    kernels into PTX in CPU mode looks its functions up by identity."""
    import numba.cuda.libdevice as real
    assert libdevice is real and real.float_as_int.__module__ == real.__name__
