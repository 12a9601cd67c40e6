"""CPU mode: one in-order stream with time in it, so that events and asynchronous work behave as
they do on a GPU.

Numba's simulator runs every kernel synchronously, on the host, and its events are dummies
(``elapsed_time`` returns -1; ``cuda.event_elapsed_time`` is missing). On a GPU, work queued on
the default stream runs in order while the host goes on; an event is stamped when the stream
reaches it. This module gives the simulator that stream, on the host's clock
(``time.perf_counter``):

- :func:`submit` queues course-provided asynchronous work that takes ``ms`` milliseconds (it
  stands for a kernel): it returns at once, and the stream is busy until the work ends;
- ``Event.record()`` stamps the event when the stream reaches it: now if the stream is idle,
  else when the work queued before it ends; ``Event.query()`` says whether that time has come;
- ``Event.synchronize()``, ``cuda.synchronize()`` and ``stream.synchronize()`` wait for it;
- ``cuda.event_elapsed_time(start, end)`` and ``start.elapsed_time(end)`` return real
  milliseconds and, as CUDA does, refuse an event never recorded (CUDA_ERROR_INVALID_HANDLE) or
  one the stream has not reached yet (CUDA_ERROR_NOT_READY);
- an ordinary simulated kernel launch, and a copy back to the host, first wait for the queued
  work (the stream runs in order); a launch keeps the stream busy while it runs, so events
  around it measure it (in the simulator's time, which says nothing about a GPU).

The stream is a timeline, not a thread: each piece of work is a span of time computed when it is
queued, and a wait sleeps until that span ends. That is what a worker thread sleeping through the
queue would show, minus the thread (a check's forked run inherits no half-done worker, and no
thread's wake-up delay leaks into the stamps). Everything else in the simulator is unchanged.
"""

from __future__ import annotations

import threading
import time

_state = {"installed": False, "busy_until": 0.0}
_lock = threading.Lock()


class EventError(RuntimeError):
    """What CUDA answers to ``cuEventElapsedTime`` on an event that cannot be read (yet)."""


def now() -> float:
    return time.perf_counter()


def _wait_until(t: float) -> None:
    while True:
        left = t - time.perf_counter()
        if left <= 0:
            return
        time.sleep(left)


def busy_until() -> float:
    """When the work queued so far ends (host clock, seconds); in the past if the stream is idle."""
    return _state["busy_until"]


def submit(ms: float) -> tuple[float, float]:
    """Queue work taking ``ms`` milliseconds; return at once with its (start, end), in seconds of
    the host's clock: it starts when the work queued before it ends (or now)."""
    with _lock:
        start = max(now(), _state["busy_until"])
        end = start + max(float(ms), 0.0) / 1e3
        _state["busy_until"] = end
    return start, end


def synchronize() -> None:
    """Wait until the stream has done everything queued on it."""
    _wait_until(_state["busy_until"])


def _occupied_since(start: float) -> None:
    """A synchronous operation ran from ``start`` until now: the stream was busy with it."""
    with _lock:
        _state["busy_until"] = max(_state["busy_until"], now())


# ---- the simulator's Event, with time in it ---------------------------------------------------------

def _event_init(self, timing=True):
    self._aag_timing = bool(timing)
    self._aag_at = None


def _record(self, stream=0):
    with _lock:
        self._aag_at = max(now(), _state["busy_until"])


def _query(self):
    at = getattr(self, "_aag_at", None)
    return at is None or now() >= at


def _event_synchronize(self):
    at = getattr(self, "_aag_at", None)
    if at is not None:
        _wait_until(at)


def _wait(self, stream=0):
    pass                      # one stream: it reaches the event before anything queued later


def event_elapsed_time(evtstart, evtend) -> float:
    """Milliseconds between two recorded events, once the stream has reached both."""
    for name, ev in (("start", evtstart), ("end", evtend)):
        if not getattr(ev, "_aag_timing", True):
            raise EventError(f"CUDA_ERROR_INVALID_HANDLE: the {name} event was made with "
                             "timing=False, so it keeps no time")
        if getattr(ev, "_aag_at", None) is None:
            raise EventError(f"CUDA_ERROR_INVALID_HANDLE: the {name} event was never recorded: "
                             "call its record() first")
    t = now()
    for name, ev in (("start", evtstart), ("end", evtend)):
        if t < ev._aag_at:
            raise EventError(f"CUDA_ERROR_NOT_READY: the GPU has not reached the {name} event "
                             "yet (the work queued before it is still running): call "
                             f"{name}.synchronize() or cuda.synchronize() before reading the time")
    return 1e3 * (evtend._aag_at - evtstart._aag_at)


def _elapsed_time(self, evtend):
    return event_elapsed_time(self, evtend)


def install() -> None:
    """Give the simulator its stream (CPU mode only; once)."""
    if _state["installed"]:
        return
    import numba.cuda
    from numba.cuda import simulator
    from numba.cuda.simulator import api, kernel
    from numba.cuda.simulator.cudadrv import devicearray

    event = api.Event
    event.__init__ = _event_init
    event.record, event.query, event.wait = _record, _query, _wait
    event.synchronize, event.elapsed_time = _event_synchronize, _elapsed_time
    event.__doc__ = ("CPU mode's event: stamped when the course's in-order stream reaches it "
                     "(autograder.machine.simulator.stream); its times are the host's clock.")
    api.stream.synchronize = lambda self: synchronize()
    for module in (numba.cuda, simulator, api):
        module.synchronize = synchronize
        module.event_elapsed_time = event_elapsed_time

    launch = kernel.FakeCUDAKernel.__call__

    def call(self, *args):
        if self._device or kernel._kernel_context:
            return launch(self, *args)          # a device function, or a call inside a kernel
        synchronize()                           # in order: after the work queued before it
        start = now()
        try:
            return launch(self, *args)
        finally:
            _occupied_since(start)

    kernel.FakeCUDAKernel.__call__ = call
    copy_to_host = devicearray.FakeCUDAArray.copy_to_host

    def copy_back(self, *args, **kwargs):
        synchronize()
        return copy_to_host(self, *args, **kwargs)

    devicearray.FakeCUDAArray.copy_to_host = copy_back
    _state["installed"] = True
