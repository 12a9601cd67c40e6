"""Where an exercise's answer came from: proof that the learner's kernel computed it.

Comparing outputs with the spec says *whether* an answer is right, not *who* computed it. A
submission could launch a do-nothing kernel of its own and compute the answer with NumPy, let a
kernel compute the first 256 outputs and the host the rest, have one thread store a sum the host
computed, or append a fake record to the harness's list of launches without launching anything.
Every one of those gets the right answer; none of them is the exercise.

CPU mode (the CUDA simulator) runs every array access of a kernel through Python, so the course
can watch the data flow of one check call. :func:`recording` registers the exercise's input and
output buffers for the call; hooks on the simulator's device arrays (installed once by
:func:`install`, from :func:`autograder.cpu_mode.install`) then record, per element:

- which input elements a thread of the learner's own kernel read (a bitmap per input);
- for outputs, the last value a thread of the learner's kernel stored and which thread stored it;
- every access to those buffers from host code during the call (``copy_to_host``,
  ``copy_to_device``, ``d[i]`` on the host, ``np.asarray(d)``, printing), and from kernels that
  are not the learner's (the course's reference, a library's).

A view made anywhere (``x[1:]`` on the host, passed to a kernel) is mapped back to its registered
buffer by its data address, so it counts like the buffer itself. Kernel threads are told apart
from host code by ``isinstance(current_thread(), BlockThread)`` (the simulator's thread class),
never by an attribute a learner could set on the main thread.

After the call, :meth:`Recorder.verdict` says in one sentence what is wrong, if anything:

(a) an exercise array was copied to or from the host by the learner's code, unless the problem
    allows it (``Problem(host_copies_allowed=True)``): "`x` was copied to the host"; and, for a
    problem whose every step must run on the device (``Problem(device_only=True)``: a host
    function that launches kernels of its own on scratch arrays of its own), any device array
    read back to the host during the call, the learner's scratch arrays included, whether
    explicitly or as a kernel launch's copy back of a NumPy argument (else a kernel could copy
    an input into a scratch array and the host compute from that);
(b) every output element holds the last value a thread of the learner's kernel stored there, or
    (never stored) what it held before the learner's code ran (the poison, or the course's zeros),
    compared bit for bit: "`out[0]` was written by the host, not by your kernel";
(c) every input element the spec depends on was read by a thread of the learner's kernel
    (``Problem(must_read=...)`` says which elements matter where not all do): "`x[12]` was never
    read by a thread of your kernel";
(d) for ``elementwise`` problems, no output element was stored by two different threads:
    "`out[37]` was written by two threads, 5 and 37".

A right value written through the simulator's internals (``d._ary``) bypasses the hooks but not
(b): the final value is compared with what the kernel stored, whatever path wrote it.

On a GPU a kernel's loads and stores cannot be watched from Python; there the recorder watches the
driver's host<->device copies (``driver.device_to_host``/``host_to_device``, which ``copy_to_host``,
``copy_to_device`` and host-side indexing of a ``DeviceNDArray`` all use) and fails a call that
copies an exercise array's bytes, (a) above, and counts launches at the driver's kernel layer as
a second count the judge compares with the harness's.

Everything here runs in the learner's process, so it can be tampered with (``gc``, ctypes); the
judge cross-checks the counts it reports with the harness's own, and the static pass
(:func:`autograder.judge.flags_in`) flags the tools such tampering needs.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

import numpy as np

FOREIGN = -2       # stored by a kernel that is not the learner's
COPIED = -3        # overwritten by a device-to-device copy (copy_to_device from a device array)
NOBODY = -1

_active: list = [None]        # the Recorder of the check call in progress, if any
_installed: dict = {}
_HERE = os.path.abspath(__file__)
_PACKAGE = os.path.dirname(os.path.dirname(_HERE)) + os.sep      # autograder/: the course's code
_RUNNER = os.path.join(os.path.dirname(_HERE), "runner.py")   # its hooks stand between a learner and ours


class Buffer:
    """One registered array: an input (``x``) or an output (``out``), its elements' records."""

    def __init__(self, name: str, role: str, array: np.ndarray, view_shape: tuple[int, ...],
                 required: Any = True):
        self.name, self.role = name, role
        self.array = array                   # the whole buffer (an output's guard zone included)
        self.view_shape = tuple(view_shape)  # what the exercise calls `name` (a prefix of it)
        self.view_size = int(np.prod(self.view_shape)) if self.view_shape else 1
        self.size = int(array.size)
        self.itemsize = array.dtype.itemsize
        self.index = np.arange(self.size, dtype=np.int64)
        if role == "in":
            self.read_bytes = bytearray(self.size)    # 1: read by a learner kernel thread
            self.read = np.frombuffer(self.read_bytes, dtype=np.bool_)
            self.required = required
        else:
            self.baseline = array.reshape(-1).copy()
            self.value = array.reshape(-1).copy()
            self.who = np.full(self.size, NOBODY, dtype=np.int64)
            self.dup = None                  # (flat, lower thread, higher) for elementwise
        self.host: list[str] = []            # what the learner's host code did with it
        self.true: np.ndarray | None = None  # an input's real data, where `array` is a decoy

    def element(self, flat: int) -> str:
        if len(self.view_shape) > 1 and flat < self.view_size:
            where = ", ".join(str(int(i)) for i in np.unravel_index(flat, self.view_shape))
        else:
            where = str(flat)
        return f"`{self.name}[{where}]`"


class Recorder:
    """The data flow of one check call (see the module's docstring)."""

    def __init__(self, *, elementwise: bool = False, host_copies_allowed: bool = False,
                 course_submission: bool = False, device_only: bool = False):
        self.buffers: list[Buffer] = []
        self.device_only = device_only
        self.other_host: list[str] = []      # device_only: other arrays read back to the host
        self.by_class: dict[type, Buffer] = {}
        self.elementwise = elementwise
        self.host_copies_allowed = host_copies_allowed
        self.learner_launches = 0
        self.foreign_launches = 0
        self.learner_stores = 0
        self.launch_number = 0
        self.learner_now = False             # a launch of the learner's kernel is running
        self.quiet = 0                       # inside a device-to-device copy
        self._restore: list = []             # (device array, real data) behind decoys
        self._cache: dict[int, tuple] = {}   # id(FakeCUDAArray or ndarray) -> (obj, buffer, map)
        # Triton's interpreter (CPU mode): the host copies of the launch in progress, as
        # (copy's first address, its end, the first address of the array it copies)
        self.triton_copies: list[tuple[int, int, int]] = []
        self._trusted = trusted_roots()
        # The course's own code checked as a submission (its reference kernels, in the course's
        # tests and `aag bench`): its kernels count as the submission's. A learner who hands one
        # in is stopped by the judge's launch check (no kernel of the learner's ran), and one
        # who wraps it in code of their own is not a course submission.
        self.course_submission = course_submission

    # -- registration ------------------------------------------------------------------------------
    def add_input(self, name: str, array, required: Any = True, decoy: bool = False) -> None:
        """``array``: a simulator device array (or its data). ``decoy``: from now until
        :meth:`restore`, the array's host-visible data (``_ary``, what ``np.asarray``,
        ``copy_to_host`` and printing see) is random bytes; a kernel thread's element accesses,
        through any view made anywhere, reach the real data. A host computation that got at
        the inputs despite the checks above computes garbage."""
        holder = array if not isinstance(array, np.ndarray) else None
        data = holder.__dict__["_ary"] if holder is not None else array
        shown = data
        if decoy and holder is not None and data.size and data.flags.c_contiguous:
            shown = np.empty_like(data)
            rng = np.random.default_rng()
            if data.dtype.kind == "f":   # finite and unrelated: a host result is plainly wrong
                shown[...] = rng.uniform(-1e3, 1e3, data.shape)
            elif data.dtype.kind in "iu":
                shown[...] = _integer_decoy(data, rng)
            else:
                shown.reshape(-1).view(np.uint8)[...] = np.frombuffer(rng.bytes(data.nbytes),
                                                                      np.uint8)
            holder.__dict__["_ary"] = shown
            self._restore.append((holder, data))
        buf = Buffer(name, "in", shown, data.shape, required)
        if shown is not data:
            buf.true = data
        self.buffers.append(buf)

    def restore(self) -> None:
        """Put the inputs' real data back where decoys stood."""
        for holder, data in self._restore:
            holder.__dict__["_ary"] = data
        self._restore.clear()

    def add_output(self, name: str, array, view_shape, tracked_class=None) -> None:
        """``array``: the whole output buffer (guard zone included), a host array or a simulator
        device array; ``view_shape``: what the exercise calls ``name``, a prefix of it."""
        array = getattr(array, "__dict__", {}).get("_ary", array)
        buf = Buffer(name, "out", array, view_shape)
        self.buffers.append(buf)
        if tracked_class is not None:
            self.by_class[tracked_class] = buf

    # -- mapping an accessed array to a registered buffer ------------------------------------------
    def lookup(self, holder, ary: np.ndarray):
        """None (not registered), or (buffer, flat-index map shaped like ``ary`` or None, the real
        data behind a decoy or None, start, step, length): the last three for 1-D views, whose
        ``x[i]`` maps to flat ``start + i * step`` without NumPy; cached per array object."""
        hit = self._cache.get(id(holder))
        if hit is not None and hit[0] is holder and hit[1] is ary:
            return hit[2]
        found = self._map(ary)
        self._cache[id(holder)] = (holder, ary, found)
        return found

    def _map(self, ary):
        if not isinstance(ary, np.ndarray):
            return None
        addr = ary.__array_interface__["data"][0]
        buf, root = self.by_class.get(type(ary)), 0
        if buf is not None:
            # An output the race detector tracks: the simulator copies it into a fresh array of
            # the same class per launch; element 0 of that copy is the output's element 0.
            base = ary
            while isinstance(base.base, np.ndarray):
                base = base.base
            root = base.__array_interface__["data"][0]
        else:
            for b in self.buffers:
                start = b.array.__array_interface__["data"][0]
                if start <= addr < start + b.array.nbytes:
                    buf, root = b, start
                    break
        if buf is None:
            return None
        off = addr - root
        item = buf.itemsize
        real = None
        if buf.true is not None:     # the same view of the real data, for kernel threads
            if all(s >= 0 for s in ary.strides):
                real = np.ndarray(shape=ary.shape, dtype=ary.dtype, buffer=buf.true, offset=off,
                                  strides=ary.strides)
            elif ary.dtype == buf.true.dtype and not off % item:
                real = np.lib.stride_tricks.as_strided(buf.true.reshape(-1)[off // item:],
                                                       shape=ary.shape, strides=ary.strides)
        if ary.dtype.itemsize != item or off % item or any(s % item for s in ary.strides):
            # A reinterpreting view (``x[:2 * m].view(np.uint64)``: two float32 per load): a 1-D
            # one's ``v[i]`` covers the bytes off + i * stride .. + its itemsize, so the elements
            # of the buffer under them; other shapes are not element-mapped.
            span = (off, ary.strides[0], ary.dtype.itemsize, ary.shape[0]) \
                if ary.ndim == 1 and type(ary) not in self.by_class else None
            return (buf, None, real, None, None, 0, span)
        idx = np.lib.stride_tricks.as_strided(
            buf.index[off // item:], shape=ary.shape,
            strides=tuple(s // item * 8 for s in ary.strides), writeable=False)
        if ary.ndim == 1:    # the common case, x[i] with an int: flat = start + i * step
            return (buf, idx, real, off // item, ary.strides[0] // item, ary.shape[0])
        return (buf, idx, real, None, None, 0)

    # -- events ---------------------------------------------------------------------------------------
    @staticmethod
    def _spanned(found, key):
        """The buffer's flat elements under ``v[key]`` of a 1-D reinterpreting view, or None."""
        span = found[6] if len(found) > 6 else None
        if span is None or not isinstance(key, (int, np.integer)):
            return None
        off, step, width, n = span
        k = int(key) + n if key < 0 else int(key)
        start = off + k * step
        item = found[0].itemsize
        return slice(start // item, (start + width - 1) // item + 1)

    def kernel_read(self, found, key) -> None:
        buf, idx = found[0], found[1]
        if idx is None and buf.role == "in" and self.learner_now:
            covered = self._spanned(found, key)
            if covered is not None:
                buf.read[covered] = True
            return
        if buf.role == "in" and idx is not None and self.learner_now:
            try:
                buf.read[idx[key]] = True
            except (IndexError, TypeError, ValueError):   # a field name, not an element
                pass

    def kernel_store(self, found, key, ary, thread) -> None:
        buf, idx = found[0], found[1]
        if buf.role == "out" and idx is None:
            covered = self._spanned(found, key)
            if covered is not None:    # a reinterpreting view's store: the elements under it
                buf.who[covered] = _thread_number(thread, self.launch_number) \
                    if self.learner_now else FOREIGN
                buf.value.reshape(-1)[covered] = buf.array.reshape(-1)[covered]
                self.learner_stores += self.learner_now
            return
        if buf.role != "out" or idx is None:
            return
        if type(key) is int and found[4] is not None:
            flat = found[3] + (key + found[5] if key < 0 else key) * found[4]
        else:
            try:
                flat = idx[key]
            except (IndexError, TypeError, ValueError):
                return
        if not self.learner_now:
            buf.who[flat] = FOREIGN
            return
        me = _thread_number(thread, self.launch_number)
        if type(flat) is int or flat.ndim == 0:
            f = int(flat)
            prev = buf.who[f]
            if self.elementwise and prev >= 0 and prev != me and (buf.dup is None
                                                                  or f < buf.dup[0]):
                # the lowest such element, its threads in order: the same whatever order the
                # simulated threads ran in
                buf.dup = (f, min(int(prev), me), max(int(prev), me))
            buf.who[f] = me
            buf.value[f] = _plain_get(ary, key)     # what the store left there, as stored
        else:
            buf.who[flat] = me
            buf.value[flat] = _plain_get(ary, key)
        self.learner_stores += 1

    def host_access(self, found, what: str) -> None:
        if self.quiet:
            return
        kind = _caller()
        buf = found[0]
        if kind == "course":
            if self.launch_number == 0 and buf.role == "out":
                buf.baseline[:] = buf.array.reshape(-1)       # the course's own set-up
            return
        if kind == "learner" and len(buf.host) < 5:
            buf.host.append(what)

    def other_host_read(self, what: str) -> None:
        """``device_only``: a device array that is not the exercise's was read to the host, by
        the learner's code or by a launch's copy back of a NumPy argument."""
        if self.quiet or not self.device_only or len(self.other_host) >= 5:
            return
        if _caller() in ("learner", "simulator"):
            self.other_host.append(what)

    def launch_starts(self, fn) -> bool:
        """A kernel is launched (not from inside another kernel): whose is it?"""
        learner = self.course_submission or is_learner_code(fn, self._trusted)
        self.launch_number += 1
        if learner:
            self.learner_launches += 1
            if self.launch_number == 1 and _caller() == "course":
                # The course launches the learner's kernel after its own set-up (zeroed bins),
                # no learner code having run yet: what the outputs hold now is what an element
                # never stored must still hold at the end.
                for b in self.buffers:
                    if b.role == "out":
                        b.baseline[:] = b.array.reshape(-1)
        else:
            self.foreign_launches += 1
        return learner

    # -- Triton's interpreter (CPU mode): loads seen by address, stores at the copy back ----------
    def triton_read(self, addresses: np.ndarray) -> None:
        """A learner kernel's load of ``addresses`` (in the interpreter's host copies)."""
        for start, end, source in self.triton_copies:
            hit = addresses[(addresses >= start) & (addresses < end)]
            if hit.size == 0:
                continue
            hit = hit - np.uint64(start) + np.uint64(source)
            for b in self.buffers:
                if b.role != "in":
                    continue
                base = b.array.__array_interface__["data"][0]
                inside = hit[(hit >= base) & (hit < base + b.array.nbytes)]
                if inside.size:
                    b.read[((inside - np.uint64(base)) // np.uint64(b.itemsize)).astype(np.int64)] = True

    def triton_copy_back(self, data: np.ndarray, copy: np.ndarray) -> bool:
        """The interpreter writes its host copy back over ``data``: record the output elements
        it changes as stored by this launch; never reveal an input hidden behind a decoy."""
        addr = data.__array_interface__["data"][0]
        for b in self.buffers:
            base = b.array.__array_interface__["data"][0]
            lo, hi = max(addr, base), min(addr + data.nbytes, base + b.array.nbytes)
            if lo >= hi:
                continue
            if b.role == "in":
                if b.true is not None:
                    return False
                continue
            item = b.itemsize
            first, last = -(-(lo - base) // item), (hi - base) // item    # whole elements only
            if first >= last:
                continue
            old = data[base + first * item - addr: base + last * item - addr]
            new = copy[base + first * item - addr: base + last * item - addr]
            changed = (old.reshape(-1, item) != new.reshape(-1, item)).any(axis=1)
            idx = first + np.flatnonzero(changed)
            if idx.size == 0:
                continue
            b.who[idx] = (self.launch_number << 40) if self.learner_now else FOREIGN
            b.value[idx] = new.reshape(-1, item)[changed].copy().view(b.array.dtype).reshape(-1)
            self.learner_stores += int(idx.size) * self.learner_now
        return True

    # -- verdict -----------------------------------------------------------------------------------
    def summary(self) -> dict:
        return {"learner_launches": self.learner_launches,
                "foreign_launches": self.foreign_launches,
                "learner_stores": self.learner_stores,
                "host_accesses": sum(len(b.host) for b in self.buffers) + len(self.other_host)}

    def judged(self) -> dict:
        """What the judge needs: the counts, the verdict, and whether it outranks the values
        (host copies and outputs written by others, yes: with a decoy in the inputs those
        values are garbage anyway; unread inputs or elements written twice, no: a kernel with a
        plain bug hears about its values first)."""
        message = self.verdict()
        return {**self.summary(), "verdict": message,
                "before_values": bool(message) and self.kind in ("host", "stores")}

    def verdict(self, final: dict[str, np.ndarray] | None = None) -> str | None:
        """The first thing wrong with the call's data flow, in a sentence; None if all is well.
        ``final``: an output's contents after the call where the buffer registered is not it.
        ``self.kind`` says which check it was: host, stores, threads or reads."""
        self.kind = "host"
        if not self.host_copies_allowed:
            for b in self.buffers:
                if b.host:
                    return (f"`{b.name}` was {b.host[0]} by your code during the check: the "
                            "exercise's arrays stay on the device, and only a kernel may compute "
                            "with them")
        if self.device_only and self.other_host:
            return (f"a device array of yours was {self.other_host[0]} during the check: in this "
                    "exercise every step runs on the device, so nothing is read back to the host "
                    "(not your scratch arrays either, nor a NumPy array passed to a kernel)")
        self.kind = "stores"
        for b in self.buffers:
            if b.role != "out":
                continue
            got = (final or {}).get(b.name, b.array).reshape(-1)[:b.view_size]
            expected = np.where(b.who[:b.view_size] >= 0, b.value[:b.view_size],
                                b.baseline[:b.view_size])
            bad = _bits(expected) != _bits(got)
            if bad.any():
                f = int(np.argmax(bad))
                who = b.who[f]
                if who == COPIED:
                    return (f"{b.element(f)} was copied in from another device array "
                            "(copy_to_device), not stored by a thread of your kernel")
                if who == FOREIGN:
                    return (f"{b.element(f)} was written by a kernel that is not yours (the "
                            "course's or a library's), not by your kernel")
                if who >= 0:
                    return (f"{b.element(f)} was changed by the host after your kernel stored it: "
                            "every output element must be the value your kernel stored there")
                return f"{b.element(f)} was written by the host, not by your kernel"
            if self.elementwise and b.dup is not None:
                self.kind = "threads"
                f, first, second = b.dup
                return (f"{b.element(f)} was written by two threads, {_thread_text(first)} and "
                        f"{_thread_text(second)}: in this exercise each element is computed by "
                        "one thread (do threads redo each other's elements? a grid-stride loop "
                        "steps by the whole grid, cuda.gridsize(1))")
        self.kind = "reads"
        for b in self.buffers:
            if b.role != "in" or b.required is False or b.size == 0:
                continue
            need = np.ones(b.size, np.bool_) if b.required is True else \
                np.asarray(b.required, np.bool_).reshape(-1)
            missing = need & ~b.read
            if missing.any():
                f = int(np.argmax(missing))
                return (f"{b.element(f)} was never read by a thread of your kernel: every input "
                        "element must reach the answer through your kernel (a result computed on "
                        "the host and stored by the kernel does not count)")
        return None


def _integer_decoy(data: np.ndarray, rng) -> np.ndarray:
    """Integers that differ from ``data`` in every element and are no larger in magnitude than
    twice its largest (at least 64): garbage to host code, but garbage that host code sizing an
    allocation by it (``np.arange(t_ptr[-1])``) allocates about what the real data would ask
    for, not gigabytes (random bytes could ask for 2**31 elements and more)."""
    info = np.iinfo(data.dtype)
    wide = data.astype(np.int64) if data.dtype != np.uint64 else data.astype(np.float64)
    top = int(min(max(64, 2 * float(np.abs(wide).max())), info.max, np.iinfo(np.int64).max))
    low = max(info.min, -top)
    drawn = rng.integers(low, top, size=data.shape, endpoint=True, dtype=np.int64)
    same = drawn == wide
    drawn[same] = np.where(drawn[same] < top, drawn[same] + 1, drawn[same] - 1)
    return drawn.astype(data.dtype)


def _plain_get(ary, key):
    # Past a subclass's __getitem__ (the race detector's tracked outputs would log a read).
    return np.ndarray.__getitem__(ary, key)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    kind = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(a.dtype.itemsize)
    return a.view(kind) if kind is not None else a


def _thread_number(thread, launch: int) -> int:
    """A thread's global linear index in its launch, with the launch number above bit 40."""
    gid = thread.__dict__.get("_aag_gid")
    if gid is None:
        grid, block = thread._manager._grid_dim, thread._manager._block_dim
        b, t = thread.blockIdx, thread.threadIdx
        block_linear = b.x + grid[0] * (b.y + grid[1] * b.z)
        per_block = int(block[0]) * int(block[1]) * int(block[2])
        gid = block_linear * per_block + thread.thread_id
        thread.__dict__["_aag_gid"] = gid
    return (launch << 40) | gid


def _thread_text(number: int) -> str:
    gid, launch = number & ((1 << 40) - 1), number >> 40
    return f"{gid}" + (f" (launch {launch})" if launch > 1 else "")


def course_set_up(array) -> None:
    """Course launch code that set an output before the learner's code runs, without going
    through the hooked device-array methods (``np.asarray(hist)[...] = 0`` on a host array the
    race detector tracks), says so here: before any launch, and only when its own caller is
    course code (a learner calling the same function gets no credit for what it wrote)."""
    rec = _active[0]
    if not isinstance(rec, Recorder) or rec.launch_number or _caller(extra=1) != "course":
        return
    for b in rec.buffers:
        if b.role == "out" and (rec.by_class.get(type(array)) is b or b.array is array or (
                isinstance(array, np.ndarray) and np.shares_memory(b.array, array))):
            b.baseline[:] = b.array.reshape(-1)


def _caller(extra: int = 0) -> str:
    """Who made the host-side access: "learner", "course" (this package) or "simulator" (the
    simulator's own copy-back after a launch). The first frame outside the array classes."""
    frame = sys._getframe(2 + extra)
    skip, skip_under = _installed.get("skip", ()), _installed.get("skip_under", ())
    while frame is not None and (frame.f_code.co_filename in skip
                                 or frame.f_code.co_filename.startswith(skip_under)):
        frame = frame.f_back
    if frame is None:
        return "course"
    name = frame.f_code.co_filename
    if name.startswith(_installed.get("simulator", "\0")):
        return "simulator"
    if name.startswith(_PACKAGE):
        return "course"
    return "learner"


def _files(*names: str) -> frozenset:
    return frozenset(names) | frozenset(os.path.abspath(n) for n in names)


def trusted_roots() -> tuple[str, ...]:
    """Where code that is not the learner's lives (this package, the Python installation, numba,
    numpy), real paths; found once per process, before GPU libraries' imports are blocked."""
    roots = _installed.get("roots")
    if roots is None:   # at install time, before the runner blocks GPU libraries' imports
        import importlib.util
        import sysconfig
        found = {_PACKAGE, sys.prefix, sys.base_prefix}
        found.update(p for k, p in sysconfig.get_paths().items()
                     if k in ("purelib", "platlib", "stdlib") and p)
        found.update(p for p in sys.path if p and "site-packages" in p)
        for name in ("numba", "numba_cuda", "numpy", "cupy"):   # wherever they were installed
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            if spec is not None and spec.origin:
                found.add(os.path.dirname(os.path.dirname(spec.origin)))
        roots = tuple(sorted({os.path.realpath(p) for p in found}))
        _installed["roots"] = roots
    return roots


_HELPER_CODE: set = set()   # code objects of the course's preparing kernels (course_helper)


def course_helper(kernel):
    """Mark a course kernel that prepares a check call (zeroing an output before the learner's
    kernel runs: ``ch09.zero``), so that launching it inside a call is not counted as a launch
    of a kernel that is not the learner's. Returns the kernel."""
    fn = getattr(kernel, "py_func", None) or getattr(kernel, "fn", None) or kernel
    code = getattr(fn, "__code__", None)
    if code is not None:
        _HELPER_CODE.add(code)
    return kernel


def is_course_helper(fn) -> bool:
    return getattr(fn, "__code__", None) in _HELPER_CODE


def is_course_code(submission) -> bool:
    """Whether a submission is the course's own (a reference kernel, a tuple of them, a kernel
    factory of the package): every part is a function defined under the trusted roots."""
    parts = submission if isinstance(submission, (tuple, list)) else (submission,)
    roots = trusted_roots()
    for part in parts:
        fn = getattr(part, "py_func", None) or part
        if getattr(fn, "__code__", None) is None:
            # a launcher object (a bench variant wraps its kernel in a small class): the course's
            # only if its class is defined in this package
            module = sys.modules.get(type(part).__module__)
            path = os.path.realpath(getattr(module, "__file__", None) or "")
            if not path.startswith(os.path.realpath(_PACKAGE) + os.sep):
                return False
        elif is_learner_code(fn, roots):
            return False
    return bool(parts)


def is_learner_code(fn, roots) -> bool:
    code = getattr(fn, "__code__", None)
    filename = os.path.realpath(code.co_filename) if code else ""
    return bool(filename) and not filename.startswith(roots)


# ---- the call ----------------------------------------------------------------------------------------

@contextlib.contextmanager
def recording(recorder: Recorder):
    """Record the data flow of the block (one check call); one at a time."""
    previous, _active[0] = _active[0], recorder
    try:
        yield recorder
    finally:
        _active[0] = previous


def active() -> Recorder | None:
    return _active[0]


# ---- CPU mode: hooks on the simulator's arrays ----------------------------------------------------

def install() -> None:
    """Hook the simulator's device arrays and kernel launches (CPU mode; once)."""
    if _installed.get("cpu"):
        return
    from numba.cuda.simulator import kernel as simkernel
    from numba.cuda.simulator.cudadrv import devicearray as simarray

    FakeCUDAArray = simarray.FakeCUDAArray
    BlockThread = simkernel.BlockThread
    current = threading.current_thread
    from autograder.machine.simulator import races
    races.add_wrapper_file(__file__)     # its frames wrap the same accesses as races' own
    _installed["skip"] = _files(__file__, simarray.__file__, _RUNNER)   # + the harness's hooks
    _installed["simulator"] = os.path.dirname(os.path.abspath(simkernel.__file__)) + os.sep
    trusted_roots()

    getitem, setitem = FakeCUDAArray.__getitem__, FakeCUDAArray.__setitem__

    def __getitem__(self, key):
        rec = _active[0]
        if rec is None:
            return getitem(self, key)
        ary = self.__dict__["_ary"]
        hit = rec._cache.get(id(self))
        found = hit[2] if hit is not None and hit[0] is self and hit[1] is ary else \
            rec.lookup(self, ary)
        if found is None:
            if rec.device_only and not isinstance(current(), BlockThread):
                value = getitem(self, key)
                if not isinstance(value, FakeCUDAArray):
                    rec.other_host_read("read on the host (`d[i]`)")
                return value
            return getitem(self, key)
        if not isinstance(current(), BlockThread):
            value = getitem(self, key)
            if not isinstance(value, FakeCUDAArray):       # a view made on the host is no copy
                rec.host_access(found, "read on the host (`d[i]`)")
            return value
        real = found[2]
        if real is not None:               # an input behind a decoy: the real element
            value = real[key]
            if isinstance(value, np.ndarray):
                return getitem(self, key)  # a view made in a kernel: over the decoy, mapped again
        else:
            value = getitem(self, key)
            if isinstance(value, FakeCUDAArray):
                return value
        buf = found[0]
        if buf.role == "in" and rec.learner_now:
            if type(key) is int and found[4] is not None:
                buf.read_bytes[found[3] + (key + found[5] if key < 0 else key) * found[4]] = 1
            else:
                rec.kernel_read(found, key)
        return value

    def __setitem__(self, key, value):
        rec = _active[0]
        if rec is None:
            return setitem(self, key, value)
        ary = self.__dict__["_ary"]
        hit = rec._cache.get(id(self))
        found = hit[2] if hit is not None and hit[0] is self and hit[1] is ary else \
            rec.lookup(self, ary)
        if found is None:
            return setitem(self, key, value)
        thread = current()
        if isinstance(thread, BlockThread):
            if found[2] is not None:       # an input behind a decoy: store into the real data
                found[2][key] = value
                return None
            result = setitem(self, key, value)
            if found[0].role == "out":
                rec.kernel_store(found, key, ary, thread)
            return result
        result = setitem(self, key, value)
        rec.host_access(found, "written on the host (`d[i] = ...`)")   # after: a set-up's values
        return result

    FakeCUDAArray.__getitem__, FakeCUDAArray.__setitem__ = __getitem__, __setitem__

    def host_method(name: str, what: str):
        original = getattr(FakeCUDAArray, name)

        def hooked(self, *args, **kwargs):
            rec = _active[0]
            if rec is not None and not isinstance(current(), BlockThread):
                found = rec.lookup(self, self.__dict__.get("_ary"))
                if found is not None:
                    rec.host_access(found, what)
                else:
                    rec.other_host_read(what)
            return original(self, *args, **kwargs)
        hooked.__name__ = name
        setattr(FakeCUDAArray, name, hooked)

    copy_to_device = FakeCUDAArray.copy_to_device

    def hooked_copy_to_device(self, ary, stream=0):
        rec = _active[0]
        if rec is None or isinstance(current(), BlockThread):
            return copy_to_device(self, ary, stream)
        if isinstance(ary, FakeCUDAArray):
            # device to device: no host copy (the simulator reads the source through d[...] on
            # this thread: not counted); the destination's elements now come from elsewhere
            # than a kernel, which the final-value check sees. From an input behind a decoy,
            # the real data is copied.
            source = rec.lookup(ary, ary.__dict__.get("_ary"))
            if source is not None and source[2] is not None:
                ary = FakeCUDAArray(source[2])
            rec.quiet += 1
            try:
                result = copy_to_device(self, ary, stream)
            finally:
                rec.quiet -= 1
            dest = rec.lookup(self, self.__dict__.get("_ary"))
            if dest is not None and dest[0].role == "out" and dest[1] is not None:
                dest[0].who[dest[1].reshape(-1)] = COPIED
            return result
        result = copy_to_device(self, ary, stream)
        found = rec.lookup(self, self.__dict__.get("_ary"))
        if found is not None:     # after the copy: a course set-up's values become the baseline
            rec.host_access(found, "overwritten from the host (copy_to_device)")
        return result
    FakeCUDAArray.copy_to_device = hooked_copy_to_device

    host_method("copy_to_host", "copied to the host (copy_to_host)")
    host_method("__str__", "printed on the host")
    host_method("__repr__", "printed on the host")

    getattr_ = FakeCUDAArray.__getattr__

    def __getattr__(self, name):
        if name[:7] == "__array":      # np.asarray(d), np.array(d): a host view of the data
            rec = _active[0]
            if rec is not None and not isinstance(current(), BlockThread):
                found = rec.lookup(self, self.__dict__.get("_ary"))
                if found is not None:
                    rec.host_access(found, "turned into a NumPy array on the host (np.asarray)")
                else:
                    rec.other_host_read("turned into a NumPy array on the host (np.asarray)")
        return getattr_(self, name)
    FakeCUDAArray.__getattr__ = __getattr__

    # Tracked outputs (races.track_outputs) are host arrays the simulator copies per launch: the
    # kernel's accesses reach them as FakeCUDAArray items (above); the copy back goes through
    # copy_to_host from the simulator, which _caller() tells apart.

    call = simkernel.FakeCUDAKernel.__call__

    def __call__(self, *args):
        rec = _active[0]
        if rec is None or self._device or simkernel._kernel_context:
            return call(self, *args)
        learner = rec.launch_starts(self.fn)
        rec.learner_now = learner
        try:
            return call(self, *args)
        finally:
            rec.learner_now = False
    simkernel.FakeCUDAKernel.__call__ = __call__
    _installed["cpu"] = True


# ---- CPU mode: Triton's interpreter ----------------------------------------------------------------

def install_triton() -> None:
    """Watch Triton's interpreter as the simulator is watched (CPU mode; once Triton is imported;
    once): its launches, its loads by address, its stores when its host copies are written back."""
    if _installed.get("triton") or "triton" not in sys.modules:
        return
    from triton.runtime import interpreter

    from autograder.machine import triton_bridge
    _installed["triton"] = True
    run = interpreter.InterpretedFunction.run

    def run_(self, *args, **kwargs):
        rec = _active[0]
        if rec is None:
            return run(self, *args, **kwargs)
        rec.learner_now = rec.launch_starts(self.fn)
        rec.triton_copies = []
        try:
            return run(self, *args, **kwargs)
        finally:
            rec.learner_now = False
            rec.triton_copies = []
    interpreter.InterpretedFunction.run = run_

    load = interpreter.InterpreterBuilder.create_masked_load

    def create_masked_load(self, ptrs, mask, *args, **kwargs):
        rec = _active[0]
        if rec is not None and rec.learner_now and rec.triton_copies:
            rec.triton_read(np.asarray(ptrs.data, np.uint64)[np.asarray(mask.data, np.bool_)])
        return load(self, ptrs, mask, *args, **kwargs)
    interpreter.InterpreterBuilder.create_masked_load = create_masked_load

    def source(data):
        rec = _active[0]
        if rec is None or not rec.learner_now:
            return data
        found = rec._map(data)
        return found[2] if found is not None and found[2] is not None else data

    def copied(data, copy):
        rec = _active[0]
        if rec is not None:
            rec.triton_copies.append((copy.__array_interface__["data"][0],
                                      copy.__array_interface__["data"][0] + copy.nbytes,
                                      data.__array_interface__["data"][0]))

    def copy_back(data, copy):
        rec = _active[0]
        return True if rec is None else rec.triton_copy_back(data, copy)
    triton_bridge.hooks.update(source=source, copied=copied, copy_back=copy_back)


# ---- GPU: host copies through the driver, launches counted at the kernel layer -------------------

class DeviceRanges:
    """GPU: the device address ranges of one call's exercise arrays, and what touched them."""

    def __init__(self, host_copies_allowed: bool = False, device_only: bool = False):
        self.ranges: list[tuple[int, int, str]] = []
        self.host: list[str] = []
        self.device_only = device_only
        self.other_host: list[str] = []      # device_only: other arrays copied to the host
        self.kernel_launches = 0
        self.host_copies_allowed = host_copies_allowed

    def add(self, name: str, device_array) -> None:
        from numba.cuda.cudadrv import driver
        start = driver.device_pointer(device_array)
        size = int(getattr(device_array, "alloc_size", 0) or device_array.nbytes)
        if start and size:            # an empty array has no memory to copy
            self.ranges.append((start, start + size, name))

    def hit(self, obj, what: str) -> None:
        try:
            from numba.cuda.cudadrv import driver
            ptr = driver.device_pointer(obj)
        except Exception:   # not device memory: nothing of ours
            return
        if not ptr:
            return
        for start, end, name in self.ranges:
            if start <= ptr < end:
                if _caller() == "learner" and len(self.host) < 5:
                    self.host.append(f"`{name}` was {what}")
                return
        if self.device_only and what == "copied to the host" and _caller() == "learner" \
                and len(self.other_host) < 5:
            self.other_host.append(what)    # a scratch array, or a NumPy argument's copy back

    def host_argument(self) -> None:
        """``device_only``: a NumPy array was passed to a kernel, which copies it back to the host
        after the launch (numba-cuda does that copy with the driver's memcpy directly, past
        ``driver.device_to_host``)."""
        if self.device_only and _caller() == "learner" and len(self.other_host) < 5:
            self.other_host.append("a NumPy array passed to a kernel")

    def summary(self) -> dict:
        return {"driver_launches": self.kernel_launches,
                "host_accesses": len(self.host) + len(self.other_host)}
    # (driver_launches: launches of the learner's kernels seen at numba's compiled-kernel layer)

    def judged(self) -> dict:
        message = self.verdict()
        return {**self.summary(), "verdict": message, "before_values": bool(message)}

    def verdict(self) -> str | None:
        if self.host and not self.host_copies_allowed:
            return (f"{self.host[0]} by your code during the check: the exercise's arrays stay "
                    "on the device, and only a kernel may compute with them")
        if self.device_only and self.other_host:
            return ("a device array of yours was copied to the host during the check: in this "
                    "exercise every step runs on the device, so nothing is read back to the host "
                    "(not your scratch arrays either, nor a NumPy array passed to a kernel)")
        return None


def install_gpu() -> None:
    """Hook the driver's copies and the compiled kernel's launch (GPU; once)."""
    if _installed.get("gpu"):
        return
    from numba.cuda import dispatcher
    from numba.cuda.cudadrv import driver

    _installed["skip"] = _files(__file__, _RUNNER)
    # numba-cuda's own layers between a learner's call and the driver (devicearray, devices'
    # require_context, driver): the caller is the first frame outside them
    _installed["skip_under"] = tuple({os.path.dirname(os.path.dirname(os.path.abspath(
        driver.__file__))) + os.sep, os.path.dirname(os.path.dirname(driver.__file__)) + os.sep})
    _installed["simulator"] = "\0"
    trusted_roots()
    d2h, h2d = driver.device_to_host, driver.host_to_device

    def device_to_host(dst, src, size, stream=0):
        rec = _active[0]
        if isinstance(rec, DeviceRanges):
            rec.hit(src, "copied to the host")
        return d2h(dst, src, size, stream)

    def host_to_device(dst, src, size, stream=0):
        rec = _active[0]
        if isinstance(rec, DeviceRanges):
            rec.hit(dst, "overwritten from the host")
        return h2d(dst, src, size, stream)

    driver.device_to_host, driver.host_to_device = device_to_host, host_to_device
    try:   # a NumPy array given to a kernel: copied to the device and back around the launch
        from numba.cuda import args as kernel_args
    except ImportError:
        kernel_args = None
    if kernel_args is not None and hasattr(kernel_args, "Out"):
        out_to_device = kernel_args.Out.to_device

        def to_device(self, retr, stream=0):
            rec = _active[0]
            if isinstance(rec, DeviceRanges) and isinstance(self.value, np.ndarray):
                rec.host_argument()
            return out_to_device(self, retr, stream)
        kernel_args.Out.to_device = to_device
    launch = dispatcher._Kernel.launch

    def counted(self, *args, **kwargs):
        rec = _active[0]
        if isinstance(rec, DeviceRanges) and is_learner_code(getattr(self, "py_func", None),
                                                         trusted_roots()):
            rec.kernel_launches += 1     # the learner's own kernels only (not the course's zero)
        return launch(self, *args, **kwargs)
    dispatcher._Kernel.launch = counted
    _installed["gpu"] = True


def install_triton_gpu() -> None:
    """GPU: count launches of the learner's Triton kernels where Triton hands a compiled kernel to
    its launcher (``CompiledKernel.run``, a step below ``JITFunction.run``, which the harness
    counts), as :func:`install_gpu` counts Numba's at the compiled-kernel layer. Once Triton is
    imported; once."""
    if _installed.get("triton_gpu") or "triton" not in sys.modules:
        return
    from triton.compiler import compiler
    prop = compiler.CompiledKernel.__dict__.get("run")
    if not isinstance(prop, property):     # a Triton whose launch this does not know: no count,
        return                             # so the judge's cross-check fails its answers plainly
    _installed["triton_gpu"] = True
    launcher_of = prop.fget

    def run(self):
        launcher = launcher_of(self)
        fn = getattr(getattr(getattr(self, "src", None), "fn", None), "fn", None)

        def counted(*args, **kwargs):
            rec = _active[0]
            if isinstance(rec, DeviceRanges) and is_learner_code(fn, trusted_roots()):
                rec.kernel_launches += 1
            return launcher(*args, **kwargs)
        return counted
    compiler.CompiledKernel.run = property(run)
