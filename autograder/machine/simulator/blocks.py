"""How CPU mode runs one block: its threads wait at ``cuda.syncthreads()`` on a condition, not a poll.

The simulator starts a Python thread per CUDA thread and, to release a barrier, has the launching
thread loop over the block's threads asking each whether it waits, without ever sleeping. That loop
holds Python's global lock for a full switch interval each time it gets it, while the block's
threads queue for the lock to take their next step: a block of 256 threads with eight barriers
spent more of its time in that loop than in the kernel.

Here the barrier is a count under one condition: a thread that arrives adds one and sleeps until
the barrier's generation changes; the last of the running threads to arrive (or a thread that
finishes while all the others wait) starts the next generation and wakes them. The release rule is
the simulator's own: a barrier opens when every thread that is still running waits at one
(:mod:`.races` checks, at that moment, that they all wait at the same one). The launching thread
sleeps on the same condition, waking when the block is done or every few milliseconds to look for
a thread that failed; then, as before, every other thread of the block is told to stop (its
``abort`` flag, checked at barriers and warp steps) and the failure is raised.

:func:`install` replaces the simulator's ``BlockManager.run`` and ``BlockThread.syncthreads`` (so
:mod:`.races` and :mod:`.warp` wrap this barrier); :func:`install_exit` wraps ``BlockThread.run``
last, outside their wrappers, because a thread counts as finished only when their end-of-thread
checks are done (:mod:`.races` may still fail a thread there, and the barrier must not open first).
"""

from __future__ import annotations

import threading

import numpy as np

_state = {"installed": False, "exit_installed": False}

LOOK_EVERY = 0.005      # seconds between the launching thread's looks for a failed thread


class _Barrier:
    """The state of one block's barrier (its lock also guards the count of running threads)."""

    __slots__ = ("cond", "running", "arrived", "generation")

    def __init__(self, running: int):
        self.cond = threading.Condition(threading.Lock())
        self.running = running          # threads started and not yet finished
        self.arrived = 0                # of those, how many wait at the barrier now
        self.generation = 0             # how many times it has opened

    def _open(self) -> None:            # the lock is held
        self.arrived = 0
        self.generation += 1
        self.cond.notify_all()


def _syncthreads(self) -> None:
    if self.abort:
        raise RuntimeError("abort flag set on syncthreads call")
    barrier = self._manager._aag_barrier
    with barrier.cond:
        generation = barrier.generation
        barrier.arrived += 1
        if barrier.arrived == barrier.running:
            barrier._open()
        else:
            while barrier.generation == generation and not self.abort:
                barrier.cond.wait()
    if self.abort:
        raise RuntimeError("abort flag set on syncthreads clear")


def _finished(thread) -> None:
    """A thread of the block ended (its exception, if any, is stored): the others may go on."""
    barrier = getattr(thread._manager, "_aag_barrier", None)
    if barrier is None:
        return
    with barrier.cond:
        barrier.running -= 1
        if barrier.running and barrier.arrived == barrier.running:
            barrier._open()
        else:
            barrier.cond.notify_all()   # the launching thread: done, or a failure to report


def _run_block(self, grid_point, *args) -> None:
    from numba.cuda.simulator import kernel

    def target():
        self._f(*args)

    threads = [kernel.BlockThread(target, self, grid_point, block_point, self._debug)
               for block_point in np.ndindex(*self._block_dim)]
    barrier = self._aag_barrier = _Barrier(len(threads))
    for t in threads:
        t.start()
    while True:
        with barrier.cond:
            if barrier.running == 0:
                break
            barrier.cond.wait(LOOK_EVERY)
        failed = next((t for t in threads if t.exception), None)
        if failed is not None:
            # Stop the others (do not wait for them: one may never end), then report it.
            for t in threads:
                t.abort = True
            with barrier.cond:
                barrier.cond.notify_all()
            raise failed.exception[0].with_traceback(failed.exception[1])
    for t in threads:
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


def install() -> None:
    """Put the barrier in place of the simulator's polling one (before anything wraps it)."""
    if _state["installed"]:
        return
    from numba.cuda.simulator import kernel
    kernel.BlockManager.run = _run_block
    kernel.BlockThread.syncthreads = _syncthreads
    _state["installed"] = True


def install_exit() -> None:
    """Count a thread as finished after every wrapper of its ``run`` (install last)."""
    if _state["exit_installed"]:
        return
    from numba.cuda.simulator import kernel
    run = kernel.BlockThread.run

    def run_then_finish(self):
        try:
            run(self)
        finally:
            _finished(self)

    kernel.BlockThread.run = run_then_finish
    _state["exit_installed"] = True
