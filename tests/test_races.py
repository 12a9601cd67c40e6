"""The CPU-mode shared-memory race detector: racy kernels are stopped every time, race-free ones
never are, and the report names the threads, the element and the lines."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import autograder as ag
from autograder import races
from autograder.checks import describe_exception

pytestmark = pytest.mark.skipif(ag.backend.name != "cpu", reason="the race detector is CPU mode's")

T = 4


@cuda.jit
def tiled_matmul(a, b, c, first_barrier, second_barrier):
    sa = cuda.shared.array((T, T), np.float32)
    sb = cuda.shared.array((T, T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = 0.0
    for t in range((a.shape[1] + T - 1) // T):
        sa[ty, tx] = a[row, t * T + tx] if row < a.shape[0] and t * T + tx < a.shape[1] else 0.0
        sb[ty, tx] = b[t * T + ty, col] if t * T + ty < b.shape[0] and col < b.shape[1] else 0.0
        if first_barrier:
            cuda.syncthreads()
        for k in range(T):
            acc += sa[ty, k] * sb[k, tx]
        if second_barrier:
            cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def block_sum(x, out, barrier):
    buf = cuda.shared.array(8, np.float32)
    i = cuda.threadIdx.x
    buf[i] = x[cuda.blockIdx.x * 8 + i]
    cuda.syncthreads()
    stride = 4
    while stride > 0:
        if i < stride:
            buf[i] += buf[i + stride]
        if barrier:
            cuda.syncthreads()
        stride //= 2
    if i == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit
def shared_histogram(values, bins):
    counts = cuda.shared.array(4, np.int32)
    i = cuda.threadIdx.x
    if i < 4:
        counts[i] = 0
    cuda.syncthreads()
    cuda.atomic.add(counts, values[i] % 4, 1)
    cuda.syncthreads()
    if i < 4:
        bins[i] = counts[i]


@cuda.jit
def histogram_peeking(values, bins):
    counts = cuda.shared.array(4, np.int32)
    i = cuda.threadIdx.x
    if i < 4:
        counts[i] = 0
    cuda.syncthreads()
    cuda.atomic.add(counts, values[i] % 4, 1)
    if i < 4:
        bins[i] = counts[i]          # read while other threads may still be adding


@cuda.jit
def own_slot_twice(x, out):
    buf = cuda.shared.array(16, np.float32)
    i = cuda.threadIdx.x
    buf[i] = x[i]
    buf[i] = buf[i] * 2.0            # the same thread reads back what it wrote: no race
    out[i] = buf[i]


def _matmul(first, second, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random((6, 7), dtype=np.float32)
    b = rng.random((7, 5), dtype=np.float32)
    c = np.full((6, 5), np.nan, np.float32)
    tiled_matmul[(2, 2), (T, T)](a, b, c, first, second)
    return a, b, c


def test_a_correct_tiled_matmul_runs_and_is_right():
    a, b, c = _matmul(True, True)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5)


@pytest.mark.parametrize("first, second, write_line, read_line", [
    (True, False, "sa[ty, tx] =", "acc += sa[ty, k]"),     # next tile written while this one is read
    (False, True, "sa[ty, tx] =", "acc += sa[ty, k]"),     # tile read before every thread wrote it
])
def test_a_missing_barrier_is_caught_every_time(first, second, write_line, read_line):
    for seed in range(5):
        with pytest.raises(races.SharedMemoryRace) as info:
            _matmul(first, second, seed)
        message = str(info.value)
        assert "shared-memory race on `s" in message and "thread" in message
        assert "no cuda.syncthreads() between them" in message
        assert "line " in message and ("sa[ty, tx] =" in message or "sb[ty, tx] =" in message)
        assert "acc += sa[ty, k] * sb[k, tx]" in message
    hint = describe_exception(message, "exception")
    assert "cuda.syncthreads()" in hint


def test_a_reduction_needs_a_barrier_per_step():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    block_sum[2, 8](x, out, True)
    np.testing.assert_array_equal(out, [x[:8].sum(), x[8:].sum()])
    with pytest.raises(races.SharedMemoryRace):
        block_sum[2, 8](x, out, False)


def test_atomics_do_not_race_with_each_other_but_do_with_a_plain_read():
    values = np.arange(16, dtype=np.int32)
    bins = np.zeros(4, np.int32)
    shared_histogram[1, 16](values, bins)
    np.testing.assert_array_equal(bins, [4, 4, 4, 4])
    with pytest.raises(races.SharedMemoryRace, match="updated \\(atomically\\)"):
        histogram_peeking[1, 16](values, bins)


def test_a_thread_rereading_its_own_element_is_not_a_race():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    own_slot_twice[1, 16](x, out)
    np.testing.assert_array_equal(out, 2 * x)


def test_the_recording_says_who_touched_what_and_when():
    with races.record() as accesses:
        _matmul(True, True)
    assert accesses
    kinds = {a.kind for a in accesses}
    assert kinds == {"read", "write"}
    assert {a.array for a in accesses} == {"sa", "sb"}
    blocks = {a.block for a in accesses}
    assert len(blocks) == 4
    # every write of a tile element happens in an even interval, reads after the barrier in odd ones
    first_block = [a for a in accesses if a.block == (0, 0, 0)]
    assert all(a.interval % 2 == 0 for a in first_block if a.kind == "write")
    assert all(a.interval % 2 == 1 for a in first_block if a.kind == "read")


def test_detection_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(races.RACE_CHECK_ENV, "0")
    _matmul(True, False)   # racy, not stopped: the result is whatever the schedule gave
