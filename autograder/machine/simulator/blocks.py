"""How CPU mode runs one block: threads kept between blocks, and a barrier they sleep at.

The simulator runs each CUDA thread of a block as a Python thread. Two things in how it does so
cost more than the kernels the course's checks run, and both are replaced here:

- **Starting threads.** It starts a new operating-system thread for every CUDA thread of every
  block, and each start waits for the new thread to report in: about 0.1 ms a thread, most of
  the time of a kernel without barriers. Here the threads are kept (:class:`_Worker`) and reused
  by the next block: a worker runs one simulated thread at a time and, while it does, *is* that
  thread to the rest of the process (``threading.current_thread()`` returns the simulated
  thread's ``BlockThread``, on which the simulator reads ``threadIdx``, and by which the race
  detector, the warp model and the data-flow recorder tell a kernel's accesses from the host's).
  A worker takes the cores of the thread that launches (:func:`cpu_mode.one_core`), as a thread
  started there would. A forked process starts with none (they do not survive a fork).
- **Barriers.** To release a barrier, the launching thread loops over the block's threads asking
  each whether it waits, without ever sleeping: that loop holds Python's global lock for a full
  switch interval each time it gets it, while the block's threads queue for the lock to take
  their next step. Here the barrier is a count under one condition: a thread that arrives adds one
  and sleeps until the barrier's generation changes; the last of the running threads to arrive
  (or a thread that finishes while all the others wait) starts the next generation and wakes
  them. The release rule is the simulator's own: a barrier opens when every thread that is still
  running waits at one (:mod:`.races` checks, at that moment, that they all wait at the same one).

Making each simulated thread cost more than running it, too: ``threading.Thread.__init__`` makes
two locks and an event per thread, and the simulator one more event for its barrier. A thread a
worker runs is never started, so :func:`_thread_init` copies a ``Thread``'s fields from one made
once instead (a barrier-free check case of 8,209 threads: 1.6 s of processor time before, 0.9 s).

The launching thread sleeps on the barrier's condition, waking when the block is done or every few
milliseconds to look for a thread that failed; then, as before, every other thread of the block is
told to stop (its ``abort`` flag, checked at barriers and warp steps) and the failure is raised.
Measured on a 2-core machine: a 256-thread block with eight barriers took 4.0 s for ten blocks
with the simulator's own loop and 1.7 s with the barrier; chapters 5, 9 and 10's tests with the
race and data-flow tests, 285 s and 145 s.

:func:`install` replaces the simulator's ``BlockManager.run`` and ``BlockThread.syncthreads`` (so
:mod:`.races` and :mod:`.warp` wrap this barrier) and makes ``BlockThread.is_alive`` and ``join``
follow the simulated thread, not a worker; :func:`install_exit` wraps ``BlockThread.run`` last,
outside their wrappers, because a thread counts as finished only when their end-of-thread checks
are done (:mod:`.races` may still fail a thread there, and the barrier must not open first).
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np

_state = {"installed": False, "exit_installed": False}

STOPPED_WAIT = 2.0      # seconds a failed block waits for its other threads to stop
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


class _Worker(threading.Thread):
    """An operating-system thread kept for the next block: it runs one simulated thread at a time,
    appearing as that thread (``threading.current_thread()`` is the simulated thread's
    ``BlockThread``, as the simulator, the race detector and the data-flow recorder expect)."""

    def __init__(self):
        super().__init__(name="aag-cpu-mode-worker", daemon=True)
        self.go = threading.Lock()
        self.go.acquire()
        self.job = None
        self.cores = self.pinned = None

    def run(self) -> None:
        me = threading.get_ident()
        while True:
            self.go.acquire()
            job, self.job = self.job, None
            if self.cores is not None and self.cores != self.pinned:   # as one_core() set them
                os.sched_setaffinity(0, self.cores)
                self.pinned = self.cores
            threading._active[me] = job           # current_thread() is the simulated thread
            try:
                job.run()
            except BaseException as exc:          # what a thread of its own would print
                threading.excepthook(threading.ExceptHookArgs(
                    (type(exc), exc, exc.__traceback__, job)))
            finally:
                threading._active[me] = self
                _pool.idle.append(self)
                job._aag_done.set()


class _Pool:
    def __init__(self):
        self.idle: list[_Worker] = []
        self.lock = threading.Lock()

    def start(self, job, cores) -> None:
        job._aag_done = threading.Event()
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        if worker is None:
            worker = _Worker()
            worker.start()
        worker.job, worker.cores = job, cores
        worker.go.release()


_pool = _Pool()


def _forget_pool() -> None:           # a forked child has none of the parent's threads
    global _pool
    _pool = _Pool()


os.register_at_fork(after_in_child=_forget_pool)


def _cores():
    """The cores the launching thread may run on (a thread it started would inherit them)."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def _is_alive(self) -> bool:
    done = getattr(self, "_aag_done", None)
    return done is not None and not done.is_set()


def _join(self, timeout=None) -> None:
    done = getattr(self, "_aag_done", None)
    if done is not None:
        done.wait(timeout)


def _run_block(self, grid_point, *args) -> None:
    from numba.cuda.simulator import kernel

    def target():
        self._f(*args)

    threads = [kernel.BlockThread(target, self, grid_point, block_point, self._debug)
               for block_point in np.ndindex(*self._block_dim)]
    barrier = self._aag_barrier = _Barrier(len(threads))
    cores = _cores()
    for t in threads:
        _pool.start(t, cores)
    while True:
        with barrier.cond:
            if barrier.running == 0:
                break
            barrier.cond.wait(LOOK_EVERY)
        failed = next((t for t in threads if t.exception), None)
        if failed is not None:
            # Stop the others, then report it. They stop at their next barrier or warp step, or
            # at their end: wait that long, so that none still records into what runs next (a
            # drawing that reruns the launch), but not forever (one may never end).
            for t in threads:
                t.abort = True
            with barrier.cond:
                barrier.cond.notify_all()
            give_up = time.monotonic() + STOPPED_WAIT
            for t in threads:
                if not t._aag_done.wait(max(0.0, give_up - time.monotonic())):
                    break
            raise failed.exception[0].with_traceback(failed.exception[1])
    for t in threads:
        t._aag_done.wait()              # back in the pool before the next block takes threads
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


def _thread_init(self, f, manager, blockIdx, threadIdx, debug):
    """The simulator's ``BlockThread.__init__`` for a thread that a worker runs and nobody starts:
    ``threading.Thread``'s fields are copied from one thread made once (whatever this Python's
    version keeps there), not made again with their locks for every simulated thread, and the
    event the simulator's own barrier waited on is left out (together about a third of the time
    a thread of a barrier-free kernel took)."""
    from numba.cuda.simulator.kernel import Dim3
    if debug:
        def target(*args, **kwargs):
            np.seterr(divide="raise")
            f(*args, **kwargs)
    else:
        target = f
    self.__dict__.update(_TEMPLATE.__dict__)
    self._target, self._args, self._kwargs = target, (), {}
    self.syncthreads_blocked = False
    self._manager = manager
    self.blockIdx = Dim3(*blockIdx)
    self.threadIdx = Dim3(*threadIdx)
    self.exception = None
    self.abort = False
    self.debug = debug
    block = manager._block_dim
    self.thread_id = self.threadIdx.x + block[0] * (self.threadIdx.y + block[1] * self.threadIdx.z)


_TEMPLATE = threading.Thread(name="aag-simulated-thread", daemon=True)   # never started


def install() -> None:
    """Put the barrier in place of the simulator's polling one (before anything wraps it)."""
    if _state["installed"]:
        return
    from numba.cuda.simulator import kernel
    kernel.BlockThread.__init__ = _thread_init
    kernel.BlockManager.run = _run_block
    kernel.BlockThread.syncthreads = _syncthreads
    kernel.BlockThread.is_alive = _is_alive
    kernel.BlockThread.join = _join
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
