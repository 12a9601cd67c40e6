"""Memory-access pictures of a learner's own kernel.

``access_picture(kernel, blocks, threads, *args)`` runs the kernel once in CPU mode (the CUDA
simulator) on the arguments given, which should be small, and records every access each thread
makes to a global array (every array argument) and to a shared array, with the source line that
made it (:func:`autograder.races.record`). From the record it works out, for each warp and each
access instruction (a source line, an array, read or write, the k-th time a thread runs it):

- global memory: how many 32-byte sectors the warp's request touches, against the fewest that
  could hold the bytes it asked for (coalescing);
- shared memory: the n-way bank conflict (32 banks of 4 bytes; lanes reading the same 4-byte
  word share it, which is no conflict);
- lanes that took no part although their warp did (divergence, or a bounds check), and threads
  that touched no memory at all (idle);
- races: the course's detector (:mod:`autograder.races`) decides; a launch it stops is recorded
  again with it off, so the whole launch is drawn, with the elements two threads touched
  unordered (one writing) circled;
- per-thread counts of global and shared reads and writes, and the bytes each moves.

When this notebook runs on a GPU, Numba's simulator cannot be loaded beside it (it is chosen
when ``numba.cuda`` is first imported), so the recording runs in a fresh Python process in CPU
mode: the kernel travels as its source (``inspect.getsource`` of ``kernel.py_func``) together
with what it refers to: modules by name, device functions by their own source, and plain values
(numbers, tuples, arrays, dtypes) pickled. Anything else (an open file, a function defined in
the notebook that is not a ``@cuda.jit`` function) stops with :class:`AccessPictureError`
naming it.
"""

from __future__ import annotations

import base64
import collections
import dis
import html
import inspect
import io
import math
import os
import pickle
import re
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograder.core.spec import skipped_while_graded
from autograder.machine.simulator import cpu_mode, races

ROOT_CLASSES = ("aag-visual", "aag-visual-access-picture")
_TABLE = "border-collapse:collapse;font-size:90%;margin:4px 0"
SECTOR_BYTES = 32
BANKS, BANK_BYTES = 32, 4
MAX_THREADS = 4096
RACE_LIMIT = 20


class AccessPictureError(RuntimeError):
    """The kernel could not be recorded (too large a launch, or it cannot be sent to CPU mode)."""


@dataclass(frozen=True)
class ArrayInfo:
    name: str
    space: str                  # "global" or "shared"
    shape: tuple[int, ...]
    itemsize: int
    dtype: str


@dataclass
class Recording:
    """What one simulated launch did, as plain data (it crosses a process boundary)."""

    kernel: str
    blocks: tuple[int, int, int]
    threads: tuple[int, int, int]
    warp_size: int
    arrays: dict[tuple[str, str], ArrayInfo]      # (space, name) -> info
    accesses: list[races.Access]
    outputs: dict[str, np.ndarray]                # every array argument, after the launch
    error: str | None = None                      # the kernel's exception, if it raised one
    isolated: bool = False                        # recorded in a separate CPU-mode process
    race: str | None = None                       # the course's race detector's verdict
    source: dict[int, str] = field(default_factory=dict)   # line -> text of the kernel's lines


# ---- recording -------------------------------------------------------------------------------
def _dim3(d) -> tuple[int, int, int]:
    d = (int(d),) if isinstance(d, (int, np.integer)) else tuple(int(v) for v in d)
    if not 1 <= len(d) <= 3 or min(d) < 1:
        raise ValueError(f"a launch dimension must be 1 to 3 positive numbers, not {d}")
    return d + (1,) * (3 - len(d))


def _py_func(kernel):
    fn = getattr(kernel, "py_func", None)
    if fn is None:
        raise TypeError(f"access_picture needs a @cuda.jit kernel, not {type(kernel).__name__}")
    return fn


def _host(value):
    if hasattr(value, "copy_to_host") and not isinstance(value, np.ndarray):
        return value.copy_to_host()
    return value


_capture: dict = {"shared": None}


@cpu_mode.extension
def _hook_launch(module) -> None:
    # Runs after races' own extension for each simulated launch, only while recording here.
    if _capture["shared"] is None:
        return
    # Keep races' shared-memory stand-in, to read the element sizes of the shared arrays.
    if isinstance(module._shared, races.RecordingShared):
        _capture["shared"].append(module._shared)


def _record_here(kernel, blocks, threads, args, warp_size: int) -> Recording:
    """Record one launch here (CPU mode). With the course's race detector on, a launch it stops
    is run again with the detector off, so the picture shows the whole launch and the race."""
    names = list(inspect.signature(_py_func(kernel)).parameters)
    if len(args) != len(names):
        raise TypeError(f"{_py_func(kernel).__name__} takes {len(names)} arguments "
                        f"({', '.join(names)}), {len(args)} were given")
    rec = _launch(kernel, blocks, threads, names, args, warp_size, check=True)
    if rec.error and rec.error.split(":")[0] in ("SharedMemoryRace", "GlobalMemoryRace"):
        race = rec.error
        rec = _launch(kernel, blocks, threads, names, args, warp_size, check=False)
        rec.race = race
    return rec


def _launch(kernel, blocks, threads, names, args, warp_size: int, check: bool) -> Recording:
    arrays: dict[tuple[str, str], ArrayInfo] = {}
    call, tracked = [], {}
    for name, value in zip(names, args):
        value = _host(value)
        if isinstance(value, np.ndarray) and value.ndim > 0:
            host = np.array(value, order="C", copy=True)      # every run starts from the inputs
            tracked[name] = races.track_outputs({name: host})[name]
            arrays[("global", name)] = ArrayInfo(name, "global", host.shape, host.itemsize,
                                                 host.dtype.str)
            call.append(tracked[name])
        else:
            call.append(value)
    shared: list = []
    _capture.update(shared=shared)
    previous = os.environ.get(races.RACE_CHECK_ENV)
    if not check:
        os.environ[races.RACE_CHECK_ENV] = "0"
    error = None
    try:
        with races.record() as log:
            try:
                kernel[blocks, threads](*call)
            except Exception as exc:             # learner code: show what it did until then
                error = f"{type(exc).__name__}: {exc}"
                _wait_for_stray_threads()
    finally:
        _capture.update(shared=None)
        if previous is None:
            os.environ.pop(races.RACE_CHECK_ENV, None)
        else:
            os.environ[races.RACE_CHECK_ENV] = previous
    for stand_in in shared:
        for array in list(stand_in._arrays.values()):
            tracker = array._tracker
            if tracker is not None:
                arrays.setdefault(("shared", tracker.name), ArrayInfo(
                    tracker.name, "shared", tuple(array.shape), array.itemsize, array.dtype.str))
    return Recording(_py_func(kernel).__name__, blocks, threads, warp_size, arrays, list(log),
                     {k: np.asarray(v).view(np.ndarray).copy() for k, v in tracked.items()},
                     error)


def _wait_for_stray_threads(timeout: float = 5.0) -> None:
    """When one thread fails, the simulator stops the launch but the block's other threads run
    on until they reach a barrier or their end; wait for them, so that they record nothing into
    a later launch's record."""
    from numba.cuda.simulator.kernel import BlockThread
    deadline = time.monotonic() + timeout
    for t in threading.enumerate():
        if isinstance(t, BlockThread) and t.is_alive():
            t.join(max(0.0, deadline - time.monotonic()))


def _can_record_here() -> bool:
    from autograder.machine import device
    if device.current().name != "cpu":
        return False
    import numba.core.config as config
    return bool(config.ENABLE_CUDASIM)


def record_accesses(kernel, blocks, threads, *args, isolate: bool | None = None,
                    warp_size: int | None = None, max_threads: int = MAX_THREADS,
                    timeout: float = 300.0) -> Recording:
    """Run ``kernel[blocks, threads](*args)`` once in CPU mode and return every access it made.

    ``isolate``: record in a separate CPU-mode process (the default when this process runs on a
    GPU; ``True`` forces it, e.g. to test it). Array arguments are copied, so the caller's arrays
    are never changed; the results are in ``Recording.outputs``.
    """
    blocks, threads = _dim3(blocks), _dim3(threads)
    total = math.prod(blocks) * math.prod(threads)
    if total > max_threads:
        raise AccessPictureError(
            f"{math.prod(blocks):,} block{'s' * (math.prod(blocks) != 1)} × "
            f"{math.prod(threads):,} threads = {total:,} threads: "
            f"the recording runs every thread in Python, so keep a picture under "
            f"{max_threads:,} threads (a smaller input, or max_threads=...)")
    if math.prod(threads) > 1024:
        raise AccessPictureError(f"{math.prod(threads)} threads per block: CUDA allows at "
                                 "most 1024")
    if isolate is None:
        isolate = not _can_record_here()
    if warp_size is None:
        from autograder.machine import device
        backend = device.current()
        warp_size = cpu_mode.warp_size() if backend.name == "cpu" else backend.warp_size
    if not isolate:
        if not _can_record_here():
            raise AccessPictureError("recording in this process needs CPU mode (the simulator); "
                                     "leave isolate unset to record in a separate process")
        rec = _record_here(kernel, blocks, threads, args, warp_size)
    else:
        rec = _record_isolated(kernel, blocks, threads, args, warp_size, timeout)
    rec.source = _source_lines(kernel)
    return rec


def _source_lines(kernel) -> dict[int, str]:
    lines: dict[int, str] = {}
    try:
        functions = _portable(kernel, check=False)["functions"]
    except AccessPictureError:
        functions = []
    for entry in functions:
        for k, text in enumerate(entry["source"].splitlines()):
            lines.setdefault(entry["line"] + k, text.strip())    # the kernel's own lines first
    return lines


# ---- the separate process ---------------------------------------------------------------------
def _global_names(code) -> set[str]:
    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL"):
            names.add(ins.argval)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _global_names(const)
    return names


def _is_cuda_function(value) -> bool:
    return hasattr(value, "py_func") and type(value).__module__.startswith("numba")


def _is_device_function(value) -> bool:
    if hasattr(value, "_device"):                            # the simulator's FakeCUDAKernel
        return bool(value._device)
    return bool(getattr(value, "targetoptions", {}).get("device", False))


def _portable(kernel, check: bool = True) -> dict:
    """The kernel and the device functions it calls, as source plus what their code refers to
    (``check``: stop at a value that cannot be sent to another process)."""
    functions: list[dict] = []
    index: dict[int, int] = {}

    def visit(dispatcher, device: bool) -> int:
        py = _py_func(dispatcher)
        if id(py) in index:
            return index[id(py)]
        try:
            source = textwrap.dedent(inspect.getsource(py))
        except (OSError, TypeError) as exc:
            raise AccessPictureError(
                f"the source of `{py.__name__}` cannot be found ({exc}), so it cannot be sent to "
                "the CPU-mode process that records accesses: define it in a notebook cell or a "
                "file") from None
        entry = {"name": py.__name__, "source": source, "file": py.__code__.co_filename,
                 "line": py.__code__.co_firstlineno, "device": device,
                 "modules": {}, "values": {}, "calls": {}}
        index[id(py)] = len(functions)
        functions.append(entry)
        refs = {n: py.__globals__[n] for n in sorted(_global_names(py.__code__))
                if n in py.__globals__}
        for name, cell in zip(py.__code__.co_freevars, py.__closure__ or ()):
            try:
                refs[name] = cell.cell_contents
            except ValueError:
                continue
        for name, value in refs.items():
            if inspect.ismodule(value):
                entry["modules"][name] = value.__name__
            elif _is_cuda_function(value):
                entry["calls"][name] = visit(value, _is_device_function(value))
            elif check:
                entry["values"][name] = _picklable(py.__name__, name, value)
        return index[id(py)]

    visit(kernel, False)
    return {"functions": functions}


def _picklable(owner: str, name: str, value):
    why = None
    if getattr(value, "__module__", None) == "__main__" and (callable(value) or
                                                            inspect.isclass(value)):
        why = "it is defined in this notebook but is not a @cuda.jit(device=True) function"
    else:
        try:
            pickle.dumps(value)
        except Exception as exc:
            why = f"it cannot be pickled ({type(exc).__name__}: {exc})"
    if why:
        raise AccessPictureError(
            f"`{owner}` refers to `{name}` (a {type(value).__name__}), which cannot be sent to "
            f"the separate CPU-mode process that records the accesses: {why}. This notebook "
            "runs on a GPU and the simulator can only be chosen when a process starts, so the "
            "kernel is rebuilt there from its source. Pass the value to the kernel as an "
            "argument, or make it a plain number, tuple or NumPy array.")
    return value


def _record_isolated(kernel, blocks, threads, args, warp_size, timeout) -> Recording:
    payload = {"bundle": _portable(kernel), "blocks": blocks, "threads": threads,
               "args": [_host(a) for a in args], "warp_size": warp_size}
    for k, a in enumerate(payload["args"]):
        try:
            pickle.dumps(a)
        except Exception as exc:
            raise AccessPictureError(f"argument {k} (a {type(a).__name__}) cannot be sent to the "
                                     f"CPU-mode process that records accesses: {exc}") from None
    package_root = str(Path(__file__).resolve().parents[3])     # the folder holding autograder/
    env = dict(os.environ, AAG_BACKEND="cpu", NUMBA_ENABLE_CUDASIM="1",
               AAG_WARP_SIZE=str(warp_size), PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(p for p in (package_root,
                                                       os.environ.get("PYTHONPATH")) if p))
    with tempfile.TemporaryDirectory(prefix="aag-access-") as tmp:
        inp, out = os.path.join(tmp, "in.pickle"), os.path.join(tmp, "out.pickle")
        with open(inp, "wb") as f:
            pickle.dump(payload, f)
        code = ("import sys, autograder\nfrom autograder.visual import access\n"
                "access._child(sys.argv[1], sys.argv[2])\n")
        try:
            proc = subprocess.run([sys.executable, "-c", code, inp, out], env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AccessPictureError(f"the CPU-mode recording took more than {timeout:.0f} s: "
                                     "try a smaller input") from None
        if proc.returncode != 0 or not os.path.exists(out):
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-12:])
            raise AccessPictureError(f"the CPU-mode process that records accesses failed "
                                     f"(exit status {proc.returncode}):\n{tail}")
        with open(out, "rb") as f:
            rec = pickle.load(f)
    rec.isolated = True
    return rec


def _child(inp: str, out: str) -> None:
    """In the separate CPU-mode process: rebuild the kernel from its source, record, write back."""
    import ast
    import builtins
    import importlib

    from numba import cuda
    with open(inp, "rb") as f:
        payload = pickle.load(f)
    built = []
    for entry in payload["bundle"]["functions"]:
        ns = {"__name__": f"aag_kernel_{entry['name']}", "__builtins__": builtins}
        for name, module in entry["modules"].items():
            ns[name] = importlib.import_module(module)
        ns.update(entry["values"])
        tree = ast.parse(entry["source"])
        definition = tree.body[0]
        definition.decorator_list = []          # the course applies cuda.jit itself
        ast.increment_lineno(tree, entry["line"] - 1)   # lines as in the learner's cell
        exec(compile(tree, entry["file"], "exec"), ns)
        fn = ns[definition.name]
        built.append((entry, ns, cuda.jit(device=True)(fn) if entry["device"] else cuda.jit(fn)))
    for entry, ns, _ in built:
        for name, k in entry["calls"].items():
            ns[name] = built[k][2]
    rec = _record_here(built[0][2], payload["blocks"], payload["threads"], payload["args"],
                       payload["warp_size"])
    with open(out, "wb") as f:
        pickle.dump(rec, f)


# ---- analysis -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class WarpRequest:
    """One warp running one access instruction once (the k-th time its threads run it)."""

    block: tuple[int, int, int]
    warp: int
    space: str
    array: str
    kind: str
    line: int
    occurrence: int
    lanes: int              # lanes that took part
    lanes_in_warp: int      # lanes of this warp that have a thread
    elements: int           # distinct elements touched
    sectors: int            # distinct 32-byte sectors touched (global)
    min_sectors: int        # the fewest sectors that can hold those elements
    ways: int               # shared: the most distinct 4-byte words in one bank (1: no conflict)


@dataclass(frozen=True)
class Race:
    space: str
    array: str
    element: tuple[int, ...]
    first: tuple            # (block, thread, kind, line)
    second: tuple


@dataclass
class InstructionSummary:
    space: str
    array: str
    kind: str
    line: int
    requests: int = 0
    sectors: int = 0
    min_sectors: int = 0
    worst_sectors: int = 0
    worst_ways: int = 0
    ways_total: int = 0
    partial: int = 0        # requests where some lanes of the warp sat out
    lanes_out: int = 0

    @property
    def mean_sectors(self) -> float:
        return self.sectors / max(self.requests, 1)

    @property
    def mean_ways(self) -> float:
        return self.ways_total / max(self.requests, 1)


_COUNT_KEYS = [("global", "read"), ("global", "write"), ("global", "atomic"),
               ("shared", "read"), ("shared", "write"), ("shared", "atomic")]


class AccessPicture:
    """The analysis of one :class:`Recording`, displayed as a picture with tables."""

    def __init__(self, recording: Recording):
        self.recording = rec = recording
        self.warp_size = rec.warp_size
        self.threads_per_block = math.prod(rec.threads)
        self._analyse()

    # -- helpers
    def _linear(self, t) -> int:
        bx, by, _ = self.recording.threads
        return t[0] + bx * (t[1] + by * t[2])

    def global_thread_id(self, block, thread) -> int:
        gx, gy, _ = self.recording.blocks
        b = block[0] + gx * (block[1] + gy * block[2])
        return b * self.threads_per_block + self._linear(thread)

    def _info(self, a: races.Access) -> ArrayInfo:
        info = self.recording.arrays.get((a.space, a.array))
        if info is None:      # unknown element size: assume 4 bytes
            info = ArrayInfo(a.array, a.space, a.shape, 4, "?")
            self.recording.arrays[(a.space, a.array)] = info
        return info

    def _analyse(self) -> None:
        rec = self.recording
        counts: dict = collections.defaultdict(collections.Counter)
        bytes_moved: dict = collections.defaultdict(collections.Counter)
        occurrence: collections.Counter = collections.Counter()
        groups: dict = collections.defaultdict(list)
        flats: dict = {}
        first_seen: dict = {}
        self._points: dict = {}      # (space, array, kind) -> (elements, thread ids), to draw
        for a in rec.accesses:
            info = self._info(a)
            key = (a.space, a.array)
            shape = info.shape or a.shape
            if key not in flats:
                flats[key] = shape
            flat = int(np.ravel_multi_index(a.element, shape)) if shape else 0
            who = (a.block, a.thread)
            counts[who][(a.space, a.kind)] += 1
            bytes_moved[who][a.space] += info.itemsize
            instr = (a.space, a.array, a.kind, a.line)
            first_seen.setdefault(instr, len(first_seen))
            k = occurrence[(who, instr)]
            occurrence[(who, instr)] += 1
            warp, lane = divmod(self._linear(a.thread), self.warp_size)
            groups[(a.block, warp) + instr + (k,)].append((lane, flat, info.itemsize))
            xs, ys = self._points.setdefault((a.space, a.array, a.kind), ([], []))
            xs.append(flat)
            ys.append(self.global_thread_id(a.block, a.thread))
        self.counts = counts
        self.bytes = bytes_moved
        self.requests: list[WarpRequest] = []
        summaries: dict = {}
        for (block, warp, space, array, kind, line, k), items in groups.items():
            lanes = {lane for lane, _, _ in items}
            in_warp = min(self.warp_size, self.threads_per_block - warp * self.warp_size)
            elements = {(flat, size) for _, flat, size in items}
            sectors, words = set(), set()
            for flat, size in elements:
                start = flat * size
                sectors.update(range(start // SECTOR_BYTES, (start + size - 1) // SECTOR_BYTES + 1))
                words.update(range(start // BANK_BYTES, (start + size - 1) // BANK_BYTES + 1))
            nbytes = sum(size for _, size in elements)
            per_bank = collections.Counter(w % BANKS for w in words)
            req = WarpRequest(block, warp, space, array, kind, line, k, len(lanes), in_warp,
                              len(elements), len(sectors) if space == "global" else 0,
                              math.ceil(nbytes / SECTOR_BYTES) if space == "global" else 0,
                              max(per_bank.values()) if space == "shared" else 0)
            self.requests.append(req)
            s = summaries.setdefault((space, array, kind, line),
                                     InstructionSummary(space, array, kind, line))
            s.requests += 1
            s.sectors += req.sectors
            s.min_sectors += req.min_sectors
            s.worst_sectors = max(s.worst_sectors, req.sectors)
            s.ways_total += req.ways
            s.worst_ways = max(s.worst_ways, req.ways)
            if req.lanes < in_warp:
                s.partial += 1
                s.lanes_out += in_warp - req.lanes
        self.instructions = sorted(summaries.values(), key=lambda s: (
            s.line, first_seen[(s.space, s.array, s.kind, s.line)]))
        everyone = [(b, t) for b in _ndindex(rec.blocks) for t in _ndindex(rec.threads)]
        self.all_threads = everyone
        self.idle_threads = [w for w in everyone if w not in counts]
        # The course's detector decides whether there is a race (it also knows the ordering that
        # warp intrinsics give); the record then says which elements and threads took part.
        self.races = _find_races(rec.accesses) if rec.race else []

    # -- numbers
    def totals(self) -> dict[tuple[str, str], int]:
        total: collections.Counter = collections.Counter()
        for c in self.counts.values():
            total.update(c)
        return {k: total.get(k, 0) for k in _COUNT_KEYS}

    def global_bytes(self) -> int:
        return sum(b["global"] for b in self.bytes.values())

    def per_thread(self) -> list[dict]:
        """One row per thread of the launch: its counts of each kind of access."""
        rows = []
        for block, thread in self.all_threads:
            c = self.counts.get((block, thread), {})
            row = {"block": block, "thread": thread,
                   "id": self.global_thread_id(block, thread)}
            for space, kind in _COUNT_KEYS:
                row[f"{space} {kind}s"] = c.get((space, kind), 0)
            row["global bytes"] = self.bytes.get((block, thread), {}).get("global", 0)
            rows.append(row)
        return rows

    def instruction(self, line: int, array: str, kind: str) -> InstructionSummary:
        for s in self.instructions:
            if (s.line, s.array, s.kind) == (line, array, kind):
                return s
        raise KeyError(f"no {kind} of {array} on line {line}")

    # -- words
    def _title(self) -> str:
        rec = self.recording
        where = "in a separate CPU-mode process" if rec.isolated else "in CPU mode"
        nb = math.prod(rec.blocks)
        return (f"Memory accesses of `{rec.kernel}`, launched with {_dims(rec.blocks)} "
                f"block{'s' * (nb != 1)} × {_dims(rec.threads)} threads (warps of "
                f"{rec.warp_size}), recorded {where}")

    def _findings(self) -> list[str]:
        t = self.totals()
        n = len(self.all_threads)
        busy = n - len(self.idle_threads)
        out = [f"Global memory: {t[('global', 'read')]:,} reads, {t[('global', 'write')]:,} "
               f"writes, {t[('global', 'atomic')]:,} atomics, {self.global_bytes():,} bytes in "
               f"all ({self.global_bytes() / max(busy, 1):.1f} per busy thread). Shared memory: "
               f"{t[('shared', 'read')]:,} reads, {t[('shared', 'write')]:,} writes, "
               f"{t[('shared', 'atomic')]:,} atomics."]
        if self.idle_threads:
            nd = _ndim(self.recording)
            out.append(f"{len(self.idle_threads)} of {n} threads touched no memory (idle), e.g. "
                       + ", ".join(f"thread {_dims(t, nd)} of block {_dims(b, nd)}"
                                   for b, t in self.idle_threads[:3]) + ".")
        partial = [s for s in self.instructions if s.partial]
        if partial:
            out.append("Lanes sat out (divergence or a bounds check) on "
                       + "; ".join(f"line {s.line} ({s.kind} {s.array}): {s.partial} of "
                                   f"{s.requests} warp requests" for s in partial[:4]) + ".")
        if self.recording.race:
            verdict = re.sub(r"^\w+: (tid=\[[^]]*\] ctaid=\[[^]]*\]: )?", "",
                             self.recording.race)
            out.append(f"Race: {verdict}")
            many = " or more" if len(self.races) >= RACE_LIMIT else ""
            if self.races:
                out.append(f"{len(self.races)}{many} element{'s' * (len(self.races) > 1)} "
                           "touched by two threads with no ordering between them, one writing "
                           "(circled in red):")
            out += ["  " + _race_text(r, _ndim(self.recording)) for r in self.races[:5]]
        else:
            out.append("No races.")
        if self.recording.error:
            out.insert(0, f"The kernel stopped with {self.recording.error} (the picture shows "
                          "what it did until then).")
        return out

    def text(self, max_threads: int = 12) -> str:
        lines = [self._title(), ""] + self._findings() + ["", "Per access instruction "
                 "(a warp request = one warp running it once):"]
        for s in self.instructions:
            lines.append("  " + self._instruction_words(s))
        lines += ["", "Per thread (threads with the same counts share a row; g: global, "
                  "s: shared):", _table_text(self._thread_rows(max_threads))]
        return "\n".join(lines)

    def _instruction_words(self, s: InstructionSummary) -> str:
        src = self.recording.source.get(s.line, "")
        head = f"line {s.line} {s.kind} {s.space} `{s.array}`" + (f"  [{src}]" if src else "")
        if s.space == "global":
            what = (f"{s.requests} warp requests, {s.mean_sectors:.1f} sectors each "
                    f"(at best {s.min_sectors / max(s.requests, 1):.1f}, worst {s.worst_sectors})")
        else:
            what = (f"{s.requests} warp requests, bank conflict {s.mean_ways:.1f}-way on average"
                    f" (worst {s.worst_ways}-way; 1 = none)")
        return f"{head}: {what}"

    def _thread_rows(self, max_rows: int) -> list[list[str]]:
        """Threads with the same counts share a row: the table stays short and shows at once
        which threads do more (a block's edge, an idle tail) and which do the same work."""
        rows = self.per_thread()
        keys = [f"{s} {k}s" for s, k in _COUNT_KEYS] + ["global bytes"]
        header = ["threads (global id)", "how many", "g reads", "g writes", "g atomics",
                  "s reads", "s writes", "s atomics", "g bytes"]
        profiles: dict = {}
        for r in rows:
            profiles.setdefault(tuple(r[k] for k in keys), []).append(r["id"])
        table = [header]
        for profile, ids in list(profiles.items())[:max_rows]:
            table.append([_ranges(ids), str(len(ids))] + [str(v) for v in profile])
        if len(profiles) > max_rows:
            table.append([f"… {len(profiles) - max_rows} more kinds of thread", ""]
                         + [""] * len(keys))
        table.append(["total", str(len(rows))] + [str(sum(r[k] for r in rows)) for k in keys])
        return table

    # -- picture
    def figure(self):
        from matplotlib.figure import Figure
        rec = self.recording
        arrays = list(dict.fromkeys((a.space, a.array) for a in rec.accesses))
        arrays = sorted(arrays, key=lambda k: k[0] != "global")[:4]   # first touched first
        fig = Figure(figsize=(11, 3.2 * (1 + (len(arrays) + 1) // 2)), dpi=90)
        rows = 1 + (len(arrays) + 1) // 2
        colours = {"read": "#1f77b4", "write": "#ff7f0e", "atomic": "#9467bd"}
        marks = {"read": "o", "write": "s", "atomic": "D"}
        n_threads = len(self.all_threads)
        for k, (space, name) in enumerate(arrays):
            ax = fig.add_subplot(rows, 2, k + 1)
            info = rec.arrays[(space, name)]
            for kind in ("read", "write", "atomic"):
                xs, ys = self._points.get((space, name, kind), ((), ()))
                if xs:
                    ax.scatter(xs, ys, s=9 if len(xs) < 2000 else 3, c=colours[kind],
                               marker=marks[kind], label=kind, alpha=0.8, linewidths=0)
            racing = [(int(np.ravel_multi_index(r.element, info.shape)) if info.shape else 0,
                       self.global_thread_id(b, t))
                      for r in self.races if (r.space, r.array) == (space, name)
                      for b, t, _, _ in (r.first, r.second)]
            if racing:
                xs, ys = zip(*racing)
                ax.scatter(xs, ys, s=60, facecolors="none", edgecolors="#d62728",
                           linewidths=1.5, label="race")
            for w in range(0, n_threads + 1, self.warp_size):
                boundary = w % self.threads_per_block == 0
                ax.axhline(w - 0.5, color="#444" if boundary else "#ccc",
                           linewidth=1.0 if boundary else 0.5)
            for b, t in self.idle_threads:
                g = self.global_thread_id(b, t)
                ax.axhspan(g - 0.5, g + 0.5, color="#eee", zorder=0)
            size = int(np.prod(info.shape)) if info.shape else 1
            ax.set_xlim(-0.5, size - 0.5)
            ax.set_ylim(n_threads - 0.5, -0.5)
            shape = "×".join(map(str, info.shape))
            ax.set_title(f"{space} `{name}` [{shape}], {info.itemsize} B per element",
                         fontsize=10)
            ax.set_xlabel("element (flat index; address = index × element size)", fontsize=8)
            ax.set_ylabel("thread (global id)", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.legend(fontsize=7, loc="upper right")
        glob = [s for s in self.instructions if s.space == "global"]
        shar = [s for s in self.instructions if s.space == "shared"]
        ax = fig.add_subplot(rows, 2, 2 * rows - 1)
        if glob:
            ypos = range(len(glob))
            ax.barh(ypos, [s.mean_sectors for s in glob], color="#1f77b4", label="sectors")
            for y, s in zip(ypos, glob):
                ax.text(s.mean_sectors, y, f" {s.mean_sectors:.1f}", va="center", fontsize=8)
            ax.scatter([s.min_sectors / max(s.requests, 1) for s in glob], ypos, color="black",
                       marker="|", s=200, zorder=3)
            ax.set_yticks(list(ypos), [f"line {s.line}: {s.kind} {s.array}" for s in glob],
                          fontsize=8)
            ax.invert_yaxis()
            ax.set_xlim(0, max(s.mean_sectors for s in glob) * 1.15 + 0.5)
        ax.set_title("coalescing: 32-byte sectors per warp request\n(mean; black mark: the fewest "
                     "that hold the bytes asked for)", fontsize=9)
        ax.tick_params(labelsize=7)
        ax = fig.add_subplot(rows, 2, 2 * rows)
        if shar:
            ypos = range(len(shar))
            ax.barh(ypos, [s.worst_ways for s in shar],
                    color=["#d62728" if s.worst_ways > 1 else "#2ca02c" for s in shar])
            for y, s in zip(ypos, shar):
                ax.text(s.worst_ways, y, f" {s.worst_ways}-way", va="center", fontsize=8)
            ax.set_yticks(list(ypos), [f"line {s.line}: {s.kind} {s.array}" for s in shar],
                          fontsize=8)
            ax.invert_yaxis()
            ax.set_xlim(0, max(2, max(s.worst_ways for s in shar)) * 1.2 + 0.5)
        else:
            ax.text(0.5, 0.5, "no shared memory", ha="center", va="center",
                    transform=ax.transAxes)
            ax.set_yticks([])
        ax.set_title("shared memory: bank conflict per warp request\n(worst n-way; 1 = none)",
                     fontsize=9)
        ax.tick_params(labelsize=7)
        fig.tight_layout()
        return fig

    def png(self) -> bytes:
        buf = io.BytesIO()
        self.figure().savefig(buf, format="png")
        return buf.getvalue()

    def _repr_html_(self) -> str:
        e = html.escape
        parts = [f"<div class='{' '.join(ROOT_CLASSES)}'>",
                 "<style>.aag-visual-access-picture td,.aag-visual-access-picture th"
                 "{padding:1px 8px;text-align:left}</style>",
                 f"<p><b>{_code(self._title())}</b></p>"]
        parts += [f"<p style='margin:2px 0'>{_code(s)}</p>" for s in self._findings()]
        img = base64.b64encode(self.png()).decode()
        parts.append(f"<img alt='memory accesses of {e(self.recording.kernel)}' "
                     f"style='max-width:100%' src='data:image/png;base64,{img}'/>")
        parts.append(f"<table style='{_TABLE}'><tr><th>line</th><th>source</th><th>access</th>"
                     "<th>warp requests"
                     "</th><th>sectors per request (fewest)</th><th>bank conflict (worst)</th>"
                     "<th>requests with lanes out</th></tr>")
        for s in self.instructions:
            glob = s.space == "global"
            sectors = (f"{s.mean_sectors:.1f} ({s.min_sectors / max(s.requests, 1):.1f})"
                       if glob else "")
            parts.append(
                f"<tr><td>{s.line}</td><td><code>{e(self.recording.source.get(s.line, ''))}"
                f"</code></td><td>{s.kind} {s.space} <code>{e(s.array)}</code></td>"
                f"<td>{s.requests}</td>"
                f"<td>{sectors}</td>"
                f"<td>{'' if glob else f'{s.worst_ways}-way'}</td><td>{s.partial}</td></tr>")
        parts.append("</table><p><b>Per thread</b> (threads with the same counts share a row; "
                     f"g: global, s: shared)</p><table style='{_TABLE}'>")
        table = self._thread_rows(12)
        parts.append("<tr>" + "".join(f"<th>{e(h)}</th>" for h in table[0]) + "</tr>")
        for row in table[1:]:
            parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
        parts.append("</table></div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self._repr_html_(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


@skipped_while_graded("The picture of your kernel's memory accesses")
def access_picture(kernel, blocks, threads, *args, isolate: bool | None = None,
                   warp_size: int | None = None, max_threads: int = MAX_THREADS,
                   timeout: float = 300.0) -> AccessPicture:
    """Run ``kernel[blocks, threads](*args)`` once in CPU mode on small arguments and draw every
    global and shared access per thread: who touches which address, 32-byte sectors per warp
    request, shared-memory bank conflicts, idle and divergent lanes, races, and per-thread counts.

    Works on a GPU too: the recording then runs in a separate CPU-mode process (``isolate``
    forces either way). The arguments are copied; ``.recording.outputs`` holds the results.
    """
    return AccessPicture(record_accesses(kernel, blocks, threads, *args, isolate=isolate,
                                         warp_size=warp_size, max_threads=max_threads,
                                         timeout=timeout))


# ---- races, from the whole record --------------------------------------------------------------
_CLASH = {"write": {"write", "read", "atomic"}, "read": {"write", "atomic"},
          "atomic": {"write", "read"}}


def _find_races(accesses: list[races.Access], limit: int = RACE_LIMIT) -> list[Race]:
    """Pairs of threads touching one element unordered, at least one writing (atomics only clash
    with plain accesses). Shared: same block and barrier interval. Global: different blocks, or
    same block and interval."""
    by_element: dict = collections.defaultdict(list)
    for a in accesses:
        if a.space == "shared":
            by_element[("shared", a.array, a.block, a.interval, a.element)].append(a)
        else:
            by_element[("global", a.array, a.element)].append(a)
    found = []
    for key, items in by_element.items():
        writers = [a for a in items if a.kind != "read"]
        if not writers or len({(a.block, a.thread) for a in items}) < 2:
            continue
        hit = None
        for w in writers:
            for other in items:
                if (other.block, other.thread) == (w.block, w.thread):
                    continue
                if other.kind not in _CLASH[w.kind]:
                    continue
                if key[0] == "global" and other.block == w.block and other.interval != w.interval:
                    continue
                hit = (w, other)
                break
            if hit:
                break
        if hit:
            w, o = hit
            found.append(Race(w.space, w.array, w.element, (w.block, w.thread, w.kind, w.line),
                              (o.block, o.thread, o.kind, o.line)))
            if len(found) >= limit:
                break
    return found


def _race_text(r: Race, ndim: int = 3) -> str:
    (b1, t1, k1, l1), (b2, t2, k2, l2) = r.first, r.second
    return (f"{r.space} `{r.array}`[{', '.join(map(str, r.element))}]: thread "
            f"{_dims(t1, ndim)} of block {_dims(b1, ndim)} ({k1}, line {l1}) and thread "
            f"{_dims(t2, ndim)} of block {_dims(b2, ndim)} ({k2}, line {l2})")


def _dims(t, ndim: int | None = None) -> str:
    """A launch size or an index, with as many coordinates as the launch uses (x first)."""
    t = tuple(int(v) for v in t)
    if ndim is None:          # a launch size: drop the trailing 1s
        ndim = max([k + 1 for k, v in enumerate(t) if v != 1] or [1])
    t = t[:ndim]
    return str(t[0]) if len(t) == 1 else "(" + ", ".join(map(str, t)) + ")"


def _ndim(rec: Recording) -> int:
    return max(max([k + 1 for k, v in enumerate(d) if v != 1] or [1])
               for d in (rec.blocks, rec.threads))


def _ndindex(dims):
    """x fastest, as CUDA numbers threads and blocks."""
    for z in range(dims[2]):
        for y in range(dims[1]):
            for x in range(dims[0]):
                yield (x, y, z)


def _code(text: str) -> str:
    """Escaped for HTML, with `names` in code type."""
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(text))


def _ranges(ids: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0–2, 5, 7–8" (shortened after a few runs)."""
    ids = sorted(ids)
    runs, start = [], ids[0]
    for prev, cur in zip(ids, ids[1:] + [None]):
        if cur != prev + 1 if cur is not None else True:
            runs.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = cur
    return ", ".join(runs[:4]) + (f", … ({len(runs)} runs)" if len(runs) > 4 else "")


def _table_text(table: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return "\n".join("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in table)
