"""Which CUDA events a piece of code recorded, where in the stream, and which times it read.

An exercise on timing (chapter 2's ``time_ms``) must know that a learner's number came from the
learner's own events, recorded around the work being timed, and not from somewhere else. So the
course wraps, once and before any learner code runs (:func:`install`, called when the backend is
chosen), the calls that do that: ``Event.record``, ``Event.elapsed_time`` and
``cuda.event_elapsed_time``. The wrappers do nothing but call through until a check opens a
:func:`watching` block; inside it they report to its :class:`Watch`:

- every ``record()`` of an event the check did not :meth:`~Watch.ignore` (its own), with the
  number of launches the check had counted (:meth:`~Watch.launched`) when it was recorded;
- every elapsed time read between two such events (which records it was read after; its value
  comes again from the course's own stamps of those records, :meth:`Watch.measured_again`).

Wrapped at installation, a name imported early (``from numba.cuda import event_elapsed_time``)
is the wrapper too. Works on the GPU (Numba's driver ``Event``) and in CPU mode (the simulator's
``Event``, given time by :mod:`autograder.machine.simulator.stream`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from dataclasses import dataclass, field

_state: dict = {"installed": False, "watch": None, "depth": 0}


@dataclass
class Reading:
    """One elapsed time read between two watched events: the launches counted when each was
    recorded (the work between them is launches ``lo`` to ``hi - 1``) and which record() of
    each it was taken after. Its time is not kept here: :meth:`Watch.measured_again` gives it
    from the course's own stamps."""
    lo: int
    hi: int
    start: int          # id() of the events (kept alive by the Watch), to tell pairs apart
    end: int
    start_rec: int      # which record() of each event the reading was taken after
    end_rec: int


@dataclass
class Watch:
    launches: int = 0
    records: int = 0
    readings: list[Reading] = field(default_factory=list)
    _at: dict = field(default_factory=dict)          # id(event) -> (launches then, event)
    _ignored: dict = field(default_factory=dict)     # id(event) -> event
    # One stamp per watched record(), taken by the course when it happened: the stream's time in
    # CPU mode; on a GPU, a pair of course events recorded right before and right after it. The
    # watch is reachable from the code it watches, so a time stored with a reading would prove
    # nothing: :meth:`measured_again` takes the time from the stamps of the two records the reading
    # was taken after. (One course event behind each record is not enough on a GPU: an event
    # recorded while the GPU is idle gets the time the GPU reaches it, so the course's event, made
    # and recorded by Python a little later, can be tens of microseconds late; the pair brackets
    # the learner's event whatever the GPU was doing.)
    _stamps: list = field(default_factory=list)
    _last: dict = field(default_factory=dict)        # id(event) -> index of its last stamp

    def launched(self) -> None:
        """The check started one more piece of work (a launch the events may surround)."""
        self.launches += 1

    def ignore(self, event) -> None:
        """The check's own event: neither its records nor its readings are the watched code's."""
        self._ignored[id(event)] = event

    def _before(self, event, args=(), kwargs=None):
        """Called just before a watched record(): on a GPU, a course event recorded in front of
        it (None in CPU mode, where the stream's own time of the record is exact)."""
        if id(event) in self._ignored or _state.get("backend") == "cpu":
            return None
        return self._twin(args, kwargs or {})

    def _record(self, event, args=(), kwargs=None, before=None) -> None:
        if id(event) in self._ignored:
            return
        self.records += 1
        self._at[id(event)] = (self.launches, event)
        self._last[id(event)] = len(self._stamps)
        at = getattr(event, "_aag_at", None)
        if at is not None:                     # CPU mode: the stream's time of the record
            self._stamps.append((float(at), float(at)))
        else:                                  # a GPU: course events in front and behind
            self._stamps.append((before, self._twin(args, kwargs or {})))

    def _twin(self, args, kwargs):
        from numba import cuda
        twin = cuda.event()
        self.ignore(twin)
        twin.record(*args, **kwargs)
        return twin

    def _read(self, start, end) -> None:
        a, b = self._at.get(id(start)), self._at.get(id(end))
        if a is None or b is None or id(start) in self._ignored or id(end) in self._ignored:
            return
        self.readings.append(Reading(a[0], b[0], id(start), id(end),
                                     self._last[id(start)], self._last[id(end)]))

    def measured_again(self, reading: Reading) -> tuple[float, float] | None:
        """The milliseconds between the two records a reading was taken after, from the course's
        own stamps, as the range ``(least, most)`` that the reading's true value lies in (one
        value twice in CPU mode); None for a reading that names no stamp the course took."""
        n = len(self._stamps)
        if not (0 <= reading.start_rec < n and 0 <= reading.end_rec < n):
            return None
        (a0, a1), (b0, b1) = self._stamps[reading.start_rec], self._stamps[reading.end_rec]
        if isinstance(a0, float) and isinstance(b0, float):
            return 1e3 * (b0 - a0), 1e3 * (b1 - a1)
        if a0 is None or b0 is None:
            return None
        elapsed = type(a1).elapsed_time
        elapsed = getattr(elapsed, "__aag_original__", elapsed)
        return float(elapsed(a1, b0)), float(elapsed(a0, b1))


@contextlib.contextmanager
def watching():
    """Report the events recorded and read inside the block to a new :class:`Watch`."""
    previous, watch = _state["watch"], Watch()
    _state["watch"] = watch
    try:
        yield watch
    finally:
        _state["watch"] = previous


def _wrap_record(original):
    @functools.wraps(original)
    def record(self, *args, **kwargs):
        watch = _state["watch"]
        before = watch._before(self, args, kwargs) if watch is not None else None
        result = original(self, *args, **kwargs)
        watch = _state["watch"]
        if watch is not None:
            watch._record(self, args, kwargs, before)
        return result
    record.__aag_original__ = original
    return record


def _wrap_elapsed(original):
    @functools.wraps(original)
    def elapsed(start, end, *args, **kwargs):
        _state["depth"] += 1           # Event.elapsed_time calls event_elapsed_time: report once
        try:
            value = original(start, end, *args, **kwargs)
        finally:
            _state["depth"] -= 1
        watch = _state["watch"]
        if watch is not None and _state["depth"] == 0:
            watch._read(start, end)
        return value
    elapsed.__aag_original__ = original
    return elapsed


def install(backend: str) -> None:
    """Wrap the event calls of the chosen backend once ("cpu", or a GPU's Numba driver)."""
    if _state["installed"]:
        return
    import numba.cuda
    modules = [numba.cuda]
    if backend == "cpu":
        from numba.cuda import simulator
        from numba.cuda.simulator import api
        event_class = api.Event
        modules += [simulator, api]
    else:
        try:
            from numba.cuda.cudadrv import driver
        except ImportError:         # a backend without Numba's CUDA driver: nothing to watch
            return
        event_class = driver.Event
        modules += [driver, importlib.import_module("numba.cuda.api")]
    _state["backend"] = backend
    event_class.record = _wrap_record(event_class.record)
    event_class.elapsed_time = _wrap_elapsed(event_class.elapsed_time)
    for module in modules:
        if hasattr(module, "event_elapsed_time"):
            module.event_elapsed_time = _wrap_elapsed(module.event_elapsed_time)
    _state["installed"] = True
