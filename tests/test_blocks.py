"""CPU mode's blocks (autograder/machine/simulator/blocks.py): kept threads and a sleeping barrier.

Each simulated thread must still look like a thread of its own to everything that asks
(``threading.current_thread()`` inside a kernel is its ``BlockThread``, with its indices; the host
is never one), barriers must still hold every thread of a block, a failing thread must still stop
its block instead of hanging it, and a forked process must still be able to launch.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag

pytestmark = pytest.mark.skipif(ag.backend.name != "cpu", reason="CPU mode (the simulator) only")


def test_each_simulated_thread_is_its_own_thread_and_the_host_is_none():
    from numba.cuda.simulator.kernel import BlockThread
    seen = []

    @cuda.jit
    def who(out):
        me = threading.current_thread()
        seen.append((type(me).__name__, isinstance(me, BlockThread), tuple(me.blockIdx)[0],
                     tuple(me.threadIdx)[0], id(me)))
        out[cuda.grid(1)] = cuda.threadIdx.x

    for _ in range(2):                  # the second launch runs on the kept threads
        seen.clear()
        out = np.full(3 * 70, -1, np.int32)
        who[3, 70](out)
        assert (out == np.tile(np.arange(70), 3)).all()
        assert all(is_block for _, is_block, *_ in seen)
        assert sorted((b, t) for *_, b, t, _ in seen) == [(b, t) for b in range(3) for t in range(70)]
        for block in range(3):          # the threads of a block are alive together: all distinct
            assert len({ident for _, _, b, _, ident in seen if b == block}) == 70
    assert not isinstance(threading.current_thread(), BlockThread)


def test_threads_are_kept_between_launches():
    tids = []

    @cuda.jit
    def touch(out):
        tids.append(threading.get_native_id())      # the operating system's thread
        out[cuda.grid(1)] = 1

    out = np.zeros(4 * 128, np.float32)
    for _ in range(5):
        touch[4, 128](out)
    assert len(tids) == 5 * 4 * 128 and (out == 1).all()
    # The simulator's own way starts a thread per simulated thread (2,560 here); kept ones are
    # never more than the threads of one block running at once.
    assert len(set(tids)) <= 128


@cuda.jit
def reverse_in_shared(x, out):
    tile = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    tile[t] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    for _ in range(3):                  # several barriers, each must hold every thread
        v = tile[cuda.blockDim.x - 1 - t]
        cuda.syncthreads()
        tile[t] = v
        cuda.syncthreads()
    if i < x.size:
        out[i] = tile[t]


def test_barriers_hold_every_thread_of_the_block():
    x = np.arange(3 * 128, dtype=np.float32)
    out = np.full_like(x, np.nan)
    reverse_in_shared[3, 128](x, out)
    # three reversals of each block's tile: reversed once
    assert (out == x.reshape(3, 128)[:, ::-1].ravel()).all()


def test_a_thread_that_fails_stops_its_block_while_the_others_wait_at_a_barrier():
    @cuda.jit
    def fails_before_the_barrier(out):
        if cuda.threadIdx.x == 5:
            out[10 ** 6] = 1            # out of bounds: this thread fails
        cuda.syncthreads()
        out[cuda.threadIdx.x] = 1

    out = np.zeros(64, np.float32)
    start = time.monotonic()
    with pytest.raises(IndexError):
        fails_before_the_barrier[1, 64](out)
    assert time.monotonic() - start < 10, "the block hung on the failed thread"
    reverse_in_shared[1, 128](np.ones(128, np.float32), np.zeros(128, np.float32))   # still fine


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_launches_without_the_parents_threads():
    out = np.zeros(256, np.float32)
    reverse_in_shared[2, 128](np.ones(256, np.float32), out)     # the parent has kept threads
    pid = os.fork()
    if pid == 0:                                                 # the child: none of them
        code = 1
        try:
            x = np.arange(256, dtype=np.float32)
            got = np.zeros_like(x)
            reverse_in_shared[2, 128](x, got)
            code = 0 if (got == x.reshape(2, 128)[:, ::-1].ravel()).all() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
