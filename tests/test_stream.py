"""CPU mode's in-order stream (autograder/machine/simulator/stream.py): asynchronous work the
course queues, events stamped when the stream reaches them, waits that wait, real milliseconds.

Without the extension the simulator's events are dummies (``elapsed_time`` returns -1, there is no
``cuda.event_elapsed_time``) and nothing is asynchronous: every test here would fail.
Durations are tens of milliseconds and the bounds one-sided or wide, so a busy machine (which
only makes the host later) cannot fail them.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from numba import cuda

import autograder as ag
from autograder.machine.simulator import stream

pytestmark = pytest.mark.skipif(ag.backend.name != "cpu", reason="CPU mode's simulated stream")

WORK_MS = 40.0


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_events_measure_the_work_queued_between_them():
    """Does an event pair around queued work measure the work, in milliseconds?"""
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    stream.submit(WORK_MS)
    end.record()
    end.synchronize()
    for elapsed in (cuda.event_elapsed_time(start, end), start.elapsed_time(end)):
        assert WORK_MS <= elapsed < WORK_MS + 5.0


def test_a_host_clock_sees_the_launch_not_the_work():
    """Does queuing work return at once, while synchronize() waits for its end?"""
    cuda.synchronize()
    t0 = time.perf_counter()
    stream.submit(WORK_MS)
    queued = (time.perf_counter() - t0) * 1e3
    cuda.synchronize()
    done = (time.perf_counter() - t0) * 1e3
    assert queued < WORK_MS / 4
    assert done >= WORK_MS


def test_the_stream_runs_in_order_and_events_wait():
    """Is an event recorded after two pieces of work stamped at the end of both, not reached
    before then (query, and elapsed_time refuses), and reached after synchronize()?"""
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    stream.submit(WORK_MS / 2)
    stream.submit(WORK_MS / 2)
    end.record()
    assert not end.query()
    with pytest.raises(stream.EventError, match="CUDA_ERROR_NOT_READY"):
        cuda.event_elapsed_time(start, end)
    t0 = time.perf_counter()
    end.synchronize()
    assert end.query()
    assert (time.perf_counter() - t0) * 1e3 >= WORK_MS / 2    # it really waited
    assert cuda.event_elapsed_time(start, end) >= WORK_MS


def test_elapsed_time_refuses_events_that_keep_no_time():
    """As CUDA does: an event never recorded, or made with timing=False, cannot be read."""
    recorded, never = cuda.event(), cuda.event()
    recorded.record()
    with pytest.raises(stream.EventError, match="never recorded"):
        cuda.event_elapsed_time(recorded, never)
    untimed = cuda.event(timing=False)
    untimed.record()
    with pytest.raises(stream.EventError, match="timing=False"):
        cuda.event_elapsed_time(recorded, untimed)


def test_ordinary_kernels_wait_for_queued_work_and_stay_correct():
    """Does a simulated kernel launch run after the work queued before it (in order), give the
    right result, and keep the stream busy so that events around it measure it?"""
    x = cuda.to_device(np.arange(8, dtype=np.float32))
    cuda.synchronize()
    t0 = time.perf_counter()
    _, work_ends = stream.submit(WORK_MS)
    start, end = cuda.event(), cuda.event()
    start.record()
    add_one[1, 8](x)
    launch_returned = time.perf_counter()
    end.record()
    assert launch_returned >= work_ends                    # it waited for the queued work
    assert (launch_returned - t0) * 1e3 >= WORK_MS
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(8, dtype=np.float32) + 1)
    end.synchronize()
    assert cuda.event_elapsed_time(start, end) > 0         # the kernel's (simulated) time


def test_copy_to_host_waits_for_queued_work():
    x = cuda.to_device(np.zeros(4))
    cuda.synchronize()
    _, work_ends = stream.submit(WORK_MS / 2)
    x.copy_to_host()
    assert time.perf_counter() >= work_ends
