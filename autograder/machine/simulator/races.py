"""Shared-memory races, caught in CPU mode every time.

On a GPU, a tiled kernel that is missing a ``cuda.syncthreads()`` is wrong, but whether a run shows
it depends on timing. In the simulator the order of threads depends on Python's scheduler, so such
a kernel may pass. This module makes CPU mode deterministic about it: every read and write of a
``cuda.shared.array`` is recorded with the thread that made it and the *barrier interval* it
happened in (how many ``syncthreads`` that thread has passed). Two different threads of a block
touching the same element in the same interval, at least one of them writing, is a race, whatever
order the threads ran in; the launch stops with :class:`SharedMemoryRace`, naming both threads, the
element and the two lines.

Atomic operations (``cuda.atomic.*``) on shared memory do not race with each other, but do with a
plain read or write of the same element in the same interval.

Within one barrier interval, lanes of one warp are also ordered by the warp intrinsics they take
part in together (``cuda.syncwarp()``, a shuffle, a vote), as on Volta and later: each access
carries its lane's vector clock entry (:mod:`autograder.warp`), and an access that another lane's
clock has already passed happened before that lane's. So a warp-synchronous stage whose steps are
separated by ``cuda.syncwarp()`` is accepted, and the same stage without it is a race.

Global memory, for the outputs of problems that ask for it (``Problem(race_check_outputs=True)``,
e.g. a histogram): :func:`track_outputs` wraps the output arrays so that every plain and atomic
access is recorded for the whole launch. Threads of *different* blocks are never ordered within a
launch, so any conflicting pair of them races (whatever the barriers); threads of one block race
as in shared memory (same barrier interval). The launch stops with :class:`GlobalMemoryRace`.

Barriers reached by only some threads (a ``cuda.syncthreads()`` inside ``if t < stride:``,
after an early ``return``, in a loop whose trip count differs per thread, or two different
barrier lines): the simulator releases a barrier once every *live* thread waits at *any* barrier,
so such kernels run and often sum right; in CUDA they are undefined behaviour. :class:`_Barriers`
checks each release and stops the launch with :class:`BarrierDivergence`, naming the barrier's
line and the threads that skipped it (see there).

The recording is reusable: inside ``with record() as accesses:`` every shared-memory access of the
simulated launches is appended to ``accesses`` (block, thread, interval, array, element, kind,
line), for pictures of who touched what and when. Disable detection with ``AAG_RACE_CHECK=0``.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import re
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np

from autograder.machine.simulator import cpu_mode

RACE_CHECK_ENV = "AAG_RACE_CHECK"


class SharedMemoryRace(RuntimeError):
    """Two threads touched one shared-memory element between the same two barriers."""


class GlobalMemoryRace(RuntimeError):
    """Two threads touched one element of a tracked output in one launch, unordered."""


@dataclass(frozen=True)
class Access:
    block: tuple[int, int, int]
    thread: tuple[int, int, int]
    interval: int          # barriers this thread had passed
    array: str             # the shared array's name (from the line that created it)
    element: tuple[int, ...]
    kind: str              # "read", "write" or "atomic"
    line: int
    space: str = "shared"  # "shared", or "global" for a tracked output
    shape: tuple[int, ...] = ()   # the array's declared shape (padding included)


_local = threading.local()      # per simulated thread: inside an atomic operation?
_warp = None                    # autograder.warp, once CPU mode installs it
_state: dict = {"recording": None, "installed": False, "launches": 0, "atomics": None}


def enabled() -> bool:
    return os.environ.get(RACE_CHECK_ENV, "1") != "0"


def _ids(thread):
    """(threadIdx, blockIdx, whether races are checked) of a simulated thread, as tuples, read at
    its first access or barrier and kept on it (a thread's indices never change; every shared
    load and every barrier of a kernel asks); None for a thread that is not simulated."""
    ids = getattr(thread, "_aag_ids", None)
    if ids is None:
        tid = getattr(thread, "threadIdx", None)
        if tid is None:
            return None
        ids = thread._aag_ids = (tuple(tid), tuple(thread.blockIdx), enabled())
    return ids


@contextlib.contextmanager
def record():
    """Collect every shared-memory access made by simulated launches inside the block."""
    accesses: list[Access] = []
    previous, _state["recording"] = _state["recording"], accesses
    try:
        yield accesses
    finally:
        _state["recording"] = previous


@contextlib.contextmanager
def count_atomics():
    """Count the atomic operations (``cuda.atomic.*``) of the simulated launches inside the
    block, by the memory they update: ``counts["shared"]`` (a ``cuda.shared.array``) and
    ``counts["global"]`` (anything else: kernel arguments). Independent of :func:`record`, so it
    nests with any recording."""
    log: list[str] = []
    counts = {"shared": 0, "global": 0}
    previous, _state["atomics"] = _state["atomics"], log
    try:
        yield counts
    finally:
        _state["atomics"] = previous
        counts["shared"] = log.count("shared")
        counts["global"] = len(log) - counts["shared"]
        if previous is not None:
            previous.extend(log)


# What conflicts with what: a plain write with anything; atomics only with plain accesses.
_CLASHES = {"write": ("write", "read", "atomic"), "read": ("write", "atomic"),
            "atomic": ("write", "read")}
_VERB = {"write": "wrote", "read": "read", "atomic": "updated (atomically)"}


def _show(line: int) -> str:
    text = linecache.getline(_state.get("file", ""), line).strip()
    return f"line {line}" + (f" `{text}`" if text else "")


class _Tracker:
    """Who touched which element of one shared array, per block and barrier interval. What is
    remembered is forgotten when the *scope* changes: here the block (blocks run one after
    another in the simulator); :class:`_GlobalTracker` keeps a whole launch."""

    space = "shared"

    def __init__(self, name: str, shape: tuple[int, ...]):
        self.name = name
        self.shape = shape
        self.flat = np.arange(int(np.prod(shape)) if shape else 1).reshape(shape)
        self.by_scope: dict = {}     # scope -> what was seen in it (only the latest is kept)

    def _scope(self, bid):
        return bid

    def _seen(self, scope) -> dict:
        seen = self.by_scope.get(scope)
        if seen is None:
            seen = self.by_scope.setdefault(scope, {})
            for old in [s for s in list(self.by_scope) if s != scope]:
                self.by_scope.pop(old, None)
        return seen

    def touch(self, key, kind: str, line: int) -> None:
        # No lock: simulated threads are Python threads, and a lock taken on every access makes
        # them queue for the GIL (a 4096-access kernel took 70 s instead of 0.4). Each access is
        # first published with single dict operations (atomic under the GIL), then checked
        # against what others published: of two conflicting accesses, the later to publish
        # always sees the earlier, whatever the interleaving.
        thread = threading.current_thread()
        ids = _ids(thread)
        if ids is None:          # not a simulated thread
            return
        tid, bid, check = ids
        interval = getattr(thread, "_aag_interval", 0)
        me = _clock(thread)
        log = _state["recording"]
        if getattr(_local, "atomic", False):
            kind, line = "atomic", _local.line
            # The simulator's atomic reads and writes its element several times (add: 3
            # accesses); a recording logs the operation once.
            if _local.logged:
                log = None
            _local.logged = True
        flat = self.flat[key]
        elements = [int(flat)] if isinstance(flat, np.integer) else flat.reshape(-1).tolist()
        seen = self._seen(self._scope(bid)) if check else None
        for flat in elements:
            if log is not None:
                log.append(Access(bid, tid, interval, self.name, self._element(flat), kind,
                                  line, self.space, self.shape))
            if check:
                self._check(seen, flat, bid, tid, interval, kind, line, me)

    def _element(self, flat: int) -> tuple[int, ...]:
        return tuple(int(i) for i in np.unravel_index(flat, self.shape)) if self.shape else ()

    def _check(self, seen, flat, bid, tid, interval, kind, line, me) -> None:
        # (interval, flat index) -> kind -> {thread: (line, stamp)}; a thread's entry is replaced
        # when a warp intrinsic has advanced its clock since (its latest access is the one that
        # matters to lanes that synchronised with it)
        entry = seen.setdefault((interval, flat), {})
        mine = entry.setdefault(kind, {})
        stamp = me[0]
        old = mine.get(tid)
        if old is None or old[1] != stamp:
            mine[tid] = (line, stamp)                                          # publish
        for other_kind in _CLASHES[kind]:
            for other, (other_line, other_stamp) in list(entry.get(other_kind, {}).items()):
                if other != tid and not _before(other_stamp, me):               # then check
                    raise SharedMemoryRace(self._message(bid, flat, tid, kind, line, other,
                                                         other_kind, other_line, other_stamp,
                                                         stamp))

    def _message(self, bid, flat, tid, kind, line, other, other_kind, other_line,
                 other_stamp=None, stamp=None) -> str:
        where = ", ".join(map(str, self._element(flat)))
        return (f"shared-memory race on `{self.name}`[{where}] in block {_dim(bid)}: thread "
                f"{_dim(other)} {_VERB[other_kind]} it ({_show(other_line)}) and thread "
                f"{_dim(tid)} {_VERB[kind]} it ({_show(line)}) with no cuda.syncthreads() "
                f"between them{_same_warp(other_stamp, stamp)}")


def _clock(thread):
    """(stamp, (warp, clock)) of a simulated thread: its stamp (warp, lane, own clock entry) marks
    its accesses; its warp and vector clock say which other lanes' accesses happened before."""
    warp, lane, clock = _warp.vector_clock(thread) if _warp is not None else (0, 0, None)
    return ((warp, lane, clock[lane] if clock else 0), (warp, clock))


def _before(other_stamp, me) -> bool:
    """Whether the access stamped ``other_stamp`` happened before this thread's current access,
    through warp intrinsics they both took part in after it (same barrier interval)."""
    warp, clock = me[1]
    return clock is not None and other_stamp[0] == warp and clock[other_stamp[1]] > other_stamp[2]


def _same_warp(other_stamp, stamp) -> str:
    if other_stamp is None or stamp is None or other_stamp[0] != stamp[0]:
        return ""
    return (" (both are lanes of one warp: a cuda.syncwarp() that both take part in would order "
            "them too)")


_dim = cpu_mode.dim_text


# -- barriers reached by every thread --------------------------------------------------------------

class BarrierDivergence(RuntimeError):
    """A ``cuda.syncthreads()`` that not every thread of the block reached (or threads at
    different barriers): undefined behaviour in CUDA."""

    def __init__(self, message: str = ""):
        # The simulator re-raises a thread's error as ``type(e)("tid=[..] ctaid=[..]: " + msg)``:
        # the thread that happened to complete the check is no news (the message names them all),
        # and without it the message is the same on every run.
        super().__init__(re.sub(r"^tid=\[[^\]]*\] ctaid=\[[^\]]*\]: ", "", str(message)))


class _Barriers:
    """Which barrier each thread of one block waits at, and which threads have finished.

    The simulator releases a barrier as soon as every thread that is still running waits at *a*
    barrier: threads that returned early, or that wait at another ``cuda.syncthreads()`` line (or
    at the same line in another loop iteration), are not told apart, so a barrier inside
    ``if t < stride:`` runs on as if it were right. CUDA requires every thread of the block to
    reach the same barrier (the same call, the same number of times); anything else is undefined
    behaviour (a GPU may hang, or release the barrier early and read stale shared memory).

    Here, the moment the simulator would release (every thread either waiting at a barrier or
    finished), the thread that completed that state checks: every thread waits, all at the same
    line (and the same calling lines of device functions) having passed the same number of
    barriers. Otherwise it raises :class:`BarrierDivergence` naming the line and the threads that
    did not reach it. That moment does not depend on the order the threads ran in (each runs
    until it blocks or ends), so the verdict is the same every time.
    """

    def __init__(self, size: int, dim: tuple[int, ...]):
        self.size, self.dim = size, dim
        self.lock = threading.Lock()
        self.waiting: dict[tuple, tuple[int, tuple]] = {}   # thread -> (barriers passed, site)
        self.finished: dict[tuple, int] = {}                # thread -> barriers passed
        self.failed = False

    def arrive(self, thread) -> None:
        tid, _, check = _ids(thread)
        if not check:
            return
        with self.lock:
            if self.failed:
                return
            self.waiting[tid] = (getattr(thread, "_aag_interval", 0), _barrier_site())
            if len(self.waiting) + len(self.finished) != self.size:
                return                           # others still running: not released yet
            error = self._diverged(thread)
            if error is None:
                self.waiting.clear()             # the simulator releases them all now
                return
            self.failed = True
        raise error

    def finish(self, thread) -> None:
        tid, _, check = _ids(thread)
        with self.lock:
            if self.failed:
                return
            if thread.exception is not None or not check:
                self.failed = True               # the block stops anyway; that error is the news
                return
            self.finished[tid] = getattr(thread, "_aag_interval", 0)
            if not self.waiting or len(self.waiting) + len(self.finished) != self.size:
                return
            error = self._diverged(thread)
            self.failed = True
        # The threads at the barrier would now be released. Fail this thread instead, and stay
        # alive until the simulator has seen it (it only looks at live threads) and aborted the
        # block.
        thread.exception = (error, None)
        deadline = time.monotonic() + 30
        while not thread.abort and time.monotonic() < deadline:
            time.sleep(0.002)

    # what went wrong, in words (the lock is held)
    def _diverged(self, thread) -> BarrierDivergence | None:
        groups: dict[tuple, list] = {}
        for tid, key in self.waiting.items():
            groups.setdefault(key, []).append(tid)
        if len(groups) == 1 and not self.finished:
            return None
        # The largest group first: most threads are usually right, a few skipped.
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))   # then by count, line
        (passed, site), first = ordered[0]
        head = (f"cuda.syncthreads() not reached by every thread of block "
                f"{_dim(thread.blockIdx)}: {self._threads(first)} "
                f"{'wait' if len(first) > 1 else 'waits'} at "
                f"{_barrier_text(site, passed)}")
        if self.finished:
            body = f", but {self._threads(self.finished)} finished without reaching it"
        else:
            others = [f"{self._threads(tids)} at {_barrier_text(s, p)}"
                      for (p, s), tids in ordered[1:3]]
            more = f" and {len(ordered) - 3} other groups" if len(ordered) > 3 else ""
            body = ", while " + "; ".join(others) + more
            if all(p == passed for (p, _s) in groups):
                # Same count, different lines: a GPU has one barrier per block (bar.sync 0),
                # so these might even release each other, but CUDA does not promise it.
                body += " (two different cuda.syncthreads() calls are not one barrier)"
        tail = (". In CUDA every thread of a block must reach the same barrier (anything else "
                "is undefined: a GPU may hang or read stale data): move it out of the `if` or "
                "loop, or after the early `return`, and guard only the work")
        return BarrierDivergence(head + body + tail)

    def _threads(self, tids) -> str:
        tids = sorted(tids, key=lambda t: (t[2], t[1], t[0]))
        n = len(tids)
        word = "thread" if n == 1 else "threads"
        if len(self.dim) == 1 or all(d == 1 for d in self.dim[1:]):
            xs = [t[0] for t in tids]
            runs, start = [], xs[0]
            for a, b in zip(xs, xs[1:] + [None]):
                if b != a + 1:
                    runs.append(str(start) if start == a else f"{start}-{a}")
                    start = b
            text = ", ".join(runs[:4]) + (", ..." if len(runs) > 4 else "")
        else:
            axes = 3 if len(self.dim) > 2 and self.dim[2] > 1 else 2      # (x, y) or (x, y, z)
            text = (", ".join("(" + ", ".join(map(str, t[:axes])) + ")" for t in tids[:4])
                    + (", ..." if n > 4 else ""))
        counted = "..." in text or "," in text
        return f"{word} {text}" + (f" ({n} threads)" if n > 2 and counted else "")


_OURS = (__file__, os.path.join(os.path.dirname(__file__), "warp.py"))


def _barrier_site() -> tuple:
    """The lines of the kernel and device functions that led to this barrier, outermost first
    (frames of the simulator and of this package are left out: ``syncthreads_count`` is one
    barrier site, at the learner's line)."""
    sites, frame = [], sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.endswith("threading.py"):
            break
        if os.sep + "simulator" + os.sep not in name and name not in _OURS:
            sites.append((name, frame.f_lineno))
        frame = frame.f_back
    return tuple(reversed(sites))


def _barrier_text(site: tuple, passed: int) -> str:
    if not site:
        return "a barrier"
    filename, line = site[-1]
    text = linecache.getline(filename, line).strip()
    nth = passed + 1
    suffix = "th" if 10 <= nth % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(nth % 10, "th")
    return f"line {line}" + (f" `{text}`" if text else "") + f" (their {nth}{suffix} barrier)"


class _GlobalTracker(_Tracker):
    """Who touched which element of one output during one launch (all blocks): threads of
    different blocks conflict whatever the barriers, threads of one block as in shared memory.
    ``clashes`` (default: any plain access against any other access but two atomics) and
    ``advice`` (what to do about two blocks' conflict) come from :func:`track_outputs`."""

    space = "global"

    def __init__(self, name: str, shape: tuple[int, ...], clashes: dict | None = None,
                 advice: str = "", what: str = "the output"):
        super().__init__(name, shape)
        self.clashes = clashes or _CLASHES
        self.advice = advice
        self.what = what

    def _scope(self, bid):
        return _state["launches"]

    def _check(self, seen, flat, bid, tid, interval, kind, line, me) -> None:
        # flat index -> (kind, block, interval) -> {thread: (line, stamp)}. Two threads per group
        # are enough to tell "another thread" apart from this one, and keep a hot bin's record
        # small.
        entry = seen.setdefault(flat, {})
        group = entry.setdefault((kind, bid, interval), {})
        if len(group) < 2 or tid in group:
            old = group.get(tid)
            if old is None or old[1] != me[0]:
                group[tid] = (line, me[0])                                     # publish
        for (other_kind, obid, ointerval), threads in list(entry.items()):      # then check
            if other_kind not in self.clashes.get(kind, ()):
                continue
            for other, (other_line, other_stamp) in list(threads.items()):
                if obid != bid or (ointerval == interval and other != tid
                                   and not _before(other_stamp, me)):
                    raise GlobalMemoryRace(self._message(
                        flat, (bid, tid, kind, line), (obid, other, other_kind, other_line)))

    def _message(self, flat, this, that) -> str:
        where = ", ".join(map(str, self._element(flat)))
        (bid, tid, kind, line), (obid, otid, okind, oline) = this, that
        why = ((self.advice or "threads of different blocks are never ordered within one "
                "launch: make every update of a shared result atomic (cuda.atomic.add)")
               if obid != bid else "no cuda.syncthreads() between them")
        return (f"global-memory race on {self.what} `{self.name}`[{where}]: thread {_dim(otid)} of "
                f"block {_dim(obid)} {_VERB[okind]} it ({_show(oline)}) and thread {_dim(tid)} "
                f"of block {_dim(bid)} {_VERB[kind]} it ({_show(line)}); {why}")


class _GlobalArray(np.ndarray):
    """Base of the per-output classes :func:`track_outputs` makes: the tracker lives on the
    class, because the simulator copies arguments into new arrays of the same type."""

    _tracker: _GlobalTracker | None = None

    def __getitem__(self, key):
        if self._tracker is not None:
            self._tracker.touch(key, "read", _kernel_line())
        return np.ndarray.__getitem__(self, key)

    def __setitem__(self, key, value):
        if self._tracker is not None:
            self._tracker.touch(key, "write", _kernel_line())
        np.ndarray.__setitem__(self, key, value)


# Files whose frames wrap a simulated access (this one; the grader's data-flow recorder adds its
# own with add_wrapper_file when it hooks the same accesses)
_WRAPPERS = {__file__}


def add_wrapper_file(path: str) -> None:
    """Frames in ``path`` wrap simulated accesses: the kernel's line is found past them."""
    _WRAPPERS.add(path)


def _simulator_dir() -> str:
    """The folder of numba's CUDA simulator (its frames are never the kernel's line)."""
    if "simulator_dir" not in _state:
        from numba.cuda.simulator import kernel
        _state["simulator_dir"] = os.path.dirname(os.path.abspath(kernel.__file__)) + os.sep
    return _state["simulator_dir"]


def _kernel_line() -> int:
    """The line of the kernel that made this access: the first frame outside the simulator's
    array wrappers (a kernel's ``out[i]`` goes through two of them) and the course's own
    (this module, and the provenance recorder's wrapper of the same arrays)."""
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename.startswith(_simulator_dir())
                                 or frame.f_code.co_filename in _WRAPPERS):
        frame = frame.f_back
    if frame is None:
        return 0
    _state["file"] = frame.f_code.co_filename
    return frame.f_lineno


def track_outputs(outputs: dict[str, np.ndarray], clashes: dict | None = None, advice: str = "",
                  what: str = "the output") -> dict[str, np.ndarray]:
    """CPU mode: the outputs, wrapped so that launches record (and race-check) every access to
    them. Turn the results back into plain arrays with ``np.asarray``. ``clashes``: which kinds
    of access ("read", "write", "atomic") conflict with which (default: a plain access with
    any other, two atomics never); ``advice``: the verdict's advice when two blocks conflict;
    ``what``: how the message names the arrays."""
    tracked = {}
    for name, array in outputs.items():
        tracker = _GlobalTracker(name, array.shape, clashes, advice, what)
        cls = type(f"Tracked_{name}", (_GlobalArray,), {"_tracker": tracker})
        tracked[name] = array.view(cls)
    return tracked


class SharedArray(np.ndarray):
    """A shared array that reports each element access to its tracker."""

    _tracker: _Tracker | None = None

    def __array_finalize__(self, obj):
        self._tracker = None   # views and results of arithmetic are plain values

    def __getitem__(self, key):
        if self._tracker is not None:
            frame = sys._getframe(1)
            if not getattr(_local, "atomic", False):   # an atomic's frame is the simulator's
                _state["file"] = frame.f_code.co_filename
            self._tracker.touch(key, "read", frame.f_lineno)
        return np.ndarray.__getitem__(self, key)

    def __setitem__(self, key, value):
        if self._tracker is not None:
            frame = sys._getframe(1)
            if not getattr(_local, "atomic", False):
                _state["file"] = frame.f_code.co_filename
            self._tracker.touch(key, "write", frame.f_lineno)
        np.ndarray.__setitem__(self, key, value)


def _as_dtype(dtype) -> np.dtype:
    from numba.core import types
    from numba.np import numpy_support
    return numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else np.dtype(dtype)


def _name_at(frame) -> str:
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    m = re.match(r"\s*(\w+)\s*=", text)
    return m.group(1) if m else f"shared array of line {frame.f_lineno}"


class RecordingShared:
    """Stands in for the simulator's ``cuda.shared``: same arrays, wrapped for tracking."""

    def __init__(self, inner):
        self._inner = inner
        self._arrays: dict[tuple, SharedArray] = {}
        self._lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        frame = sys._getframe(1)
        raw = None
        if shape == 0:     # dynamic shared memory: one buffer for all
            raw = self._inner.array(shape, dtype)
            site = ("dynamic", raw.dtype.str)
        else:   # one array per line that creates it, as in the simulator
            site = (frame.f_code.co_filename, frame.f_lineno)
        with self._lock:
            wrapped = self._arrays.get(site)
            if wrapped is None:
                if raw is None:
                    # Shared memory starts with leftovers on a GPU. Here: every byte 0x5A, the
                    # same on every run (np.empty's leftovers are sometimes NaN, which changed a
                    # verdict from "wrong" to "unwritten" between runs); finite as a float.
                    raw = np.empty(shape, _as_dtype(dtype))
                    raw.view(np.uint8)[...] = 0x5A
                wrapped = raw.view(SharedArray)
                wrapped._tracker = _Tracker(_name_at(frame), raw.shape)
                self._arrays[site] = wrapped
        return wrapped

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _AtomicMarking:
    """Stands in for ``cuda.atomic``: marks the accesses an atomic operation makes."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        fn = getattr(self._inner, name)
        if not callable(fn):
            return fn

        def atomic(*args, **kwargs):
            counts = _state["atomics"]
            if counts is not None and args:
                # list.append is atomic under the GIL (no lock: see _Tracker.touch)
                counts.append("shared" if isinstance(args[0], SharedArray) else "global")
            frame = sys._getframe(1)          # the kernel's line, not the simulator's
            _state["file"] = frame.f_code.co_filename
            _local.atomic, _local.line, _local.logged = True, frame.f_lineno, False
            try:
                return fn(*args, **kwargs)
            finally:
                _local.atomic = False
        return atomic


def _extend(module) -> None:
    _state["launches"] += 1          # one fake module per launch: global tracking starts afresh
    module._shared = RecordingShared(module._shared)
    module._atomic = _AtomicMarking(module._atomic)


def install() -> None:
    """Hook the simulator (CPU mode only): track shared arrays, count barrier intervals, and check
    that every thread of a block reaches the same barriers (:class:`_Barriers`)."""
    if _state["installed"]:
        return
    from numba.cuda.simulator import kernel

    sync = kernel.BlockThread.syncthreads
    manager_init, thread_run = kernel.BlockManager.__init__, kernel.BlockThread.run

    def block_init(self, f, grid_dim, block_dim, debug):
        manager_init(self, f, grid_dim, block_dim, debug)
        self._aag_barriers = _Barriers(int(np.prod(block_dim)), tuple(block_dim))

    def syncthreads(self):
        barriers = getattr(self._manager, "_aag_barriers", None)
        if barriers is not None:
            barriers.arrive(self)        # raises BarrierDivergence instead of a wrong release
        sync(self)
        self._aag_interval = getattr(self, "_aag_interval", 0) + 1

    def run(self):
        thread_run(self)                 # the simulator stores the thread's exception, if any
        barriers = getattr(self._manager, "_aag_barriers", None)
        if barriers is not None:
            barriers.finish(self)

    kernel.BlockManager.__init__ = block_init
    kernel.BlockThread.syncthreads = syncthreads
    kernel.BlockThread.run = run
    cpu_mode.extension(_extend)
    global _warp
    from autograder.machine.simulator import warp as _warp_module
    _warp = _warp_module
    _state["installed"] = True
