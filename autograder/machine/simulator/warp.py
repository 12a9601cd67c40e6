"""Warp intrinsics for CPU mode: shuffles, votes, matches, ``syncwarp``, ``activemask``.

The CUDA simulator runs each thread of a block as a Python thread and has none of Numba's warp
intrinsics. This module gives CPU mode ``cuda.shfl_sync``, ``shfl_up_sync``, ``shfl_down_sync``,
``shfl_xor_sync``, ``ballot_sync``, ``all_sync``, ``any_sync``, ``eq_sync``, ``match_any_sync``,
``match_all_sync``, ``syncwarp``, ``activemask``, ``lanemask_lt`` and a ``laneid`` that follow the
warp size (``cpu_mode.install(warp_size=64)``, or ``with cpu_mode.warp_size_as(64):``); it also
makes ``popc``, ``ffs``, ``clz`` and ``brev`` right for negative and 64-bit values (a ballot with
the last lane set is a negative int32, as in Numba).

**Warps.** The warp of a thread is its linear index in the block (``x + X*(y + Y*z)``) divided by
the warp size; the last warp of a block whose size is not a multiple of it is partial: its missing
lanes do not exist. Masks have as many bits as the warp has lanes (64 at warp size 64); a mask is
cut to that width, as Numba cuts it to 32 bits.

**Lockstep exchange.** A ``*_sync(mask, ...)`` call parks its lane until every lane named in the
mask has either called a warp intrinsic of the same kind with the same mask, or finished the kernel
(PTX: "all non-exited threads in membermask"; lanes past the end of a partial warp count as
finished). Then the values are exchanged among the lanes that came, every one of them gets its
result, and they go on together. Lanes of one warp that call with different sites (an ``if`` and
its ``else``) but the same intrinsic and mask meet, as they do on Volta and later. The exchange
follows the PTX ISA's ``shfl.sync`` pseudo-code with Numba's operands (clamp 31, or 0 for ``up``;
no segments), widened to the warp size: the source lane field is ``b mod warpsize`` (a delta of 33
moves by 1 at warp size 32, as PTX's ``b[4:0]``); a lane whose source lies outside the warp (up
past lane 0, down past the last lane) gets its own value.

**Undefined results.** Reading from a lane that is in the warp but did not take part (not in the
mask, finished, or past the end of a partial warp) is undefined in CUDA. CPU mode returns a poison
value of the caller's type, so a kernel that uses it fails its check and a kernel that ignores it
(the upper lanes of a reduction) passes: a NaN with payload ``0x7FFADBAD`` (float32) or
``0x7FFBADBADBADBADB`` (float64), ``0x7FBADBAD`` (int32) or ``0x7FBADBAD7FBADBAD`` (int64). The
H200 returned something else there (recorded in ``tests/fixtures/warp-h200.json``; the test prints
what); CPU mode does not copy it because no GPU promises it. ``AAG_WARP_UNDEFINED=error`` makes
such a read an error naming the lanes instead. :func:`undefined_reads` lists those of the last
launch. One such read is always an error: from a lane outside a mask that ``activemask()``
returned (below).

**Errors instead of hangs** (:class:`WarpError`, naming the block, the lanes and the source lines):
a lane whose mask leaves out its own lane (:class:`WarpMaskError`); a shuffle whose mask is the
value ``activemask()`` returned and whose source lane, in the warp, is not in it
(:class:`WarpActiveMaskRead`, naming the lane, the mask and the line the mask was taken at); lanes
named in each other's masks that call different intrinsics or pass different masks
(:class:`WarpMismatch`); a lane named in the mask that waits at ``cuda.syncthreads()`` while
others wait at a warp intrinsic, or masks that wait on each other in a ring
(:class:`WarpDeadlock`: a GPU hangs there). These are found when they happen, whatever the order
the threads ran in. The last resort is a timeout: a lane that has
waited ``AAG_WARP_TIMEOUT`` seconds (default 60) while nothing in its warp moved, for a lane that
is still running (a loop that never ends), stops the launch with :class:`WarpDeadlock`.

**activemask().** CUDA's ``__activemask()`` reports the lanes of the warp that happen to be
converged when it runs, the caller among them (CUDA C++ Programming Guide, "Warp Vote Functions");
since Volta's independent thread scheduling nothing promises which lanes those are, so its value
is no way to name the lanes a shuffle needs (NVIDIA's blog "Using CUDA Warp-Level Primitives").
Threads of the simulator are not in lockstep, so there is no "currently active" set to read. CPU
mode takes the lanes of the warp that reach the same call together: the call waits until every
lane of its warp that is still running is parked (at a warp intrinsic, at ``cuda.syncthreads()``,
or finished), then looks at the lanes parked at the same ``activemask()`` call (same line, and
same lines of the calling device functions). ``AAG_ACTIVEMASK`` says what they get:

- ``split`` (the default) plays the adversary CUDA allows: of two or more such lanes, a seeded
  part (at least one, never all; the same on every run of a launch) gets the mask of just those
  lanes and goes on; the others stay parked and are served the same way when the warp is still
  again. So a mask from ``activemask()`` never names every lane that reached the call, and a
  kernel that takes it for "the whole warp" fails in CPU mode every time, where a GPU would
  usually give it the whole warp and go wrong only some day. The value returned
  (:class:`ActiveMask`; arithmetic on it gives a plain int) remembers its line, for
  :class:`WarpActiveMaskRead`.
- ``converged`` gives all of them, as the H200 did (``tests/test_warp.py`` checks 2,452 recorded
  results of branches, nested branches and early exits in this mode).

When several ``activemask()`` calls have lanes waiting, the one earliest in the source text goes
first, so lanes of an ``if`` arm that are released run on and join the others after the ``if``:
in ``converged`` mode, after ``if c: m = activemask() else: m = activemask()`` each arm gets its
own lanes and a call after the ``if`` gets them all. Limits: which lanes a GPU keeps converged is
up to its compiler (a branch it predicates instead of jumping gives the whole warp there); in a
loop whose trip count differs per lane, CPU mode groups the lanes in the same iteration, while on
the H200 the compiled (unrolled) loop split them into smaller groups (497 of 852 recorded results
differ; CUDA promises neither, and code correct for any active set is correct for both); in loops
the "earliest line first" order is a heuristic; a lane that spins on a flag which another lane
sets only after its ``activemask()`` makes that call wait (and time out), where a GPU would go on;
and ``activemask()`` orders no memory (it does not synchronize).

**Memory.** A warp intrinsic orders memory among the lanes that take part, as on Volta and later:
the race detector (:mod:`autograder.races`) accepts a warp-synchronous shared-memory stage whose
steps are separated by ``cuda.syncwarp()`` (or any shuffle or vote of the same lanes), and still
flags the same code without it. Each lane carries a vector clock over its warp's lanes, advanced by
the intrinsics it takes part in.

Values: shuffles take 32- and 64-bit ints and floats (``np.int32``, ``np.int64``, ``np.float32``,
``np.float64``, Python ``int``/``float``) as Numba does and return the source lane's value
unchanged (NaN payloads and ``-0.0`` kept); ``ballot_sync`` and ``match_*`` return a signed
warp-width int (Numba: int32), ``activemask`` and ``lanemask_lt`` an unsigned one (Numba: uint32;
store them in a uint32/uint64 array: the simulator's NumPy refuses 0xFFFFFFFF in an int32 one,
where a GPU wraps), ``all_sync`` and friends a bool. A mask may be any integer, as in Numba (which
passes the low 32 bits of whatever integer type it gets): ``~uint64(0) >> (64 - cuda.warpsize)``
names every lane at warp size 32 and at 64, where ``(1 << cuda.warpsize) - 1`` would shift a
64-bit integer by its whole width in compiled code (undefined in LLVM's ``shl``).

Cost: an arrival is O(1) under one lock per block; lanes wait on a condition (no polling), and the
whole warp is examined only when none of its lanes is running. A 1000-element shuffle reduction
(4 blocks of 256) runs in about 0.5-0.9 s here, faster than the same kernel with six
``cuda.syncthreads()`` in place of its warp steps (0.7-2 s).
"""

from __future__ import annotations

import linecache
import os
import random
import struct
import sys
import threading
import time
import zlib

import numpy as np

from autograder.machine.simulator import cpu_mode

UNDEFINED_ENV = "AAG_WARP_UNDEFINED"     # "poison" (the default) or "error"
TIMEOUT_ENV = "AAG_WARP_TIMEOUT"         # seconds without progress before a waiting lane gives up
ACTIVEMASK_ENV = "AAG_ACTIVEMASK"        # "split" (the default) or "converged"

POISON_INT32 = 0x7FBADBAD
POISON_INT64 = 0x7FBADBAD7FBADBAD
POISON_FLOAT32_BITS = 0x7FFADBAD
POISON_FLOAT64_BITS = 0x7FFBADBADBADBADB


class WarpError(RuntimeError):
    """A warp intrinsic was used in a way that CUDA leaves undefined or that hangs a GPU."""


class WarpMaskError(WarpError):
    """A lane called a warp intrinsic with a mask that leaves out its own lane."""


class WarpMismatch(WarpError):
    """Lanes named in each other's masks called different intrinsics, or with different masks."""


class WarpDeadlock(WarpError):
    """Lanes wait for each other forever (a GPU hangs)."""


class WarpUndefinedRead(WarpError):
    """A shuffle read a lane that did not take part (only with AAG_WARP_UNDEFINED=error)."""


class WarpActiveMaskRead(WarpError):
    """A shuffle whose mask came from ``cuda.activemask()`` read a lane outside that mask."""


class _Aborted(RuntimeError):
    """Another thread of the block failed first: this one stops without a report of its own."""


# -- values -------------------------------------------------------------------------------------

class Word(int):
    """An int that remembers the width of the CUDA integer it stands for (the int32 of a ballot,
    the uint32 of an activemask), so that ``popc``/``ffs``/``clz``/``brev`` count the right bits.
    Arithmetic on it gives plain ints, as Numba widens int32 with int64 to int64."""

    def __new__(cls, value: int, bits: int, signed: bool):
        v = int(value) & ((1 << bits) - 1)
        if signed and v >> (bits - 1):
            v -= 1 << bits
        word = int.__new__(cls, v)
        word.bits = bits
        return word

    def __repr__(self) -> str:
        return int.__repr__(self)

    __str__ = __repr__


class ActiveMask(Word):
    """What ``activemask()`` returns: an unsigned warp-width :class:`Word` that also remembers the
    line it was taken at (``site``), so that a shuffle using it as its mask can say where the mask
    came from. Arithmetic on it gives plain ints, which forget that."""

    def __new__(cls, value: int, bits: int, site):
        word = super().__new__(cls, value, bits, False)
        word.site = site
        return word


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)


def _value_kind(value, what: str) -> str:
    """'f4', 'f8', 'i4', 'i8' (a Python float is f8, a Python int i8), or TypeError like Numba's."""
    if isinstance(value, (bool, np.bool_)):
        kind = None
    elif isinstance(value, np.generic):
        kind = {_F32: "f4", _F64: "f8", _I32: "i4", _I64: "i8"}.get(value.dtype)
    elif isinstance(value, float):
        kind = "f8"
    elif isinstance(value, int):
        kind = "i8" if -(1 << 63) <= value < (1 << 63) else None
    else:
        kind = None
    if kind is None:
        raise TypeError(f"{what} only supports 32- and 64-bit ints and floats (as in Numba), "
                        f"not {type(value).__name__} {value!r}")
    return kind


def _poison(value):
    if isinstance(value, np.generic):
        kind = {_F32: ("<u4", POISON_FLOAT32_BITS), _F64: ("<u8", POISON_FLOAT64_BITS),
                _I32: ("<u4", POISON_INT32), _I64: ("<u8", POISON_INT64)}[value.dtype]
        return np.array(kind[1], dtype=kind[0]).view(value.dtype)[()]
    if isinstance(value, float):
        return struct.unpack("<d", struct.pack("<Q", POISON_FLOAT64_BITS))[0]
    return POISON_INT64


def is_poison(value) -> bool:
    """Whether ``value`` is the poison CPU mode returns for an undefined read."""
    return bits_of(value) in (POISON_INT32, POISON_INT64, POISON_FLOAT32_BITS, POISON_FLOAT64_BITS)


def bits_of(value) -> int:
    """The bit pattern of a shuffled value, as an unsigned int (floats by their IEEE bits)."""
    if isinstance(value, np.generic):
        size = value.dtype.itemsize
        return int(np.array(value).view(f"<u{size}")[()])
    if isinstance(value, float):
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    return int(value) & ((1 << 64) - 1)


def _predicate(value, what: str) -> bool:
    if isinstance(value, (float, np.floating)):
        raise TypeError(f"{what}: the predicate must be an integer or a boolean (as in Numba), "
                        f"not {type(value).__name__} {value!r}")
    return bool(value)


def _width(x) -> int:
    if isinstance(x, Word):
        return x.bits
    if isinstance(x, np.integer):
        return x.dtype.itemsize * 8
    x = int(x)
    # The simulator counts a non-negative Python int as 32-bit; a negative one or one past 32 bits
    # can only be Numba's int64.
    return 32 if 0 <= x < (1 << 32) else 64


def popc(x) -> int:
    return bin(int(x) & ((1 << _width(x)) - 1)).count("1")


def ffs(x) -> int:
    v = int(x) & ((1 << _width(x)) - 1)
    return (v & -v).bit_length()


def clz(x) -> int:
    w = _width(x)
    return w - (int(x) & ((1 << w) - 1)).bit_length()


def brev(x) -> int:
    w = _width(x)
    return int(format(int(x) & ((1 << w) - 1), f"0{w}b")[::-1], 2)


# -- the state of a block's warps ------------------------------------------------------------------

RUN, PARK, SYNC, DONE = "running", "parked", "syncthreads", "finished"
_PENDING = object()


class _Call:
    """A lane parked at a warp intrinsic."""

    __slots__ = ("op", "mask", "value", "arg", "site", "frame_site", "key", "mask_site")

    def __init__(self, op, mask, value, arg, site, frame_site, mask_site=None):
        self.op, self.mask, self.value, self.arg = op, mask, value, arg
        self.site, self.frame_site = site, frame_site
        self.mask_site = mask_site           # where activemask() gave the mask, if it did
        # Lanes meet when their keys are equal: same intrinsic and mask; for activemask(), the
        # same call site.
        self.key = (op, frame_site) if op == "activemask" else (op, mask)


class _Warp:
    """The lanes of one warp: where each one is, and who waits at what. Guarded by the block's
    lock; the counters make an arrival cost O(1) and the full look happens only when the warp
    is still (no lane running)."""

    def __init__(self, block: "_Block", index: int, lanes: int):
        self.block = block
        self.index = index
        self.n = lanes                       # lanes that exist (fewer in a partial last warp)
        self.cond = threading.Condition(block.lock)
        self.status = [RUN] * lanes
        self.call: list[_Call | None] = [None] * lanes
        self.result = [_PENDING] * lanes
        self.error: list[BaseException | None] = [None] * lanes
        self.gen = [0] * lanes               # barriers passed when it started waiting at one
        self.sync_site = [None] * lanes
        self.clock: list[list[int] | None] = [None] * lanes   # vector clocks, made when needed
        self.groups: dict[tuple, list[int]] = {}   # key -> lanes parked with it, not yet served
        self.live = (1 << lanes) - 1         # lanes that have not finished
        self.nrun = lanes                    # lanes running (not parked, at a barrier, finished)
        self.at_barrier: set[int] = set()
        self.moved = time.monotonic()        # last time anything in this warp changed
        self.releases = 0                    # activemask() groups split so far (seeds the next)

    def blocked_at_barrier(self, lane: int) -> bool:
        return self.status[lane] == SYNC and self.gen[lane] >= self.block.released_gen

    def running(self, lane: int) -> bool:
        return self.status[lane] == RUN or (self.status[lane] == SYNC
                                             and not self.blocked_at_barrier(lane))

    def still(self) -> bool:
        """No lane can change what it waits for: all are parked, blocked at a barrier or done."""
        return self.nrun == 0 and all(self.blocked_at_barrier(p) for p in self.at_barrier)

    # status changes (the block's lock is held)
    def park(self, lane: int, call: _Call) -> None:
        self.status[lane] = PARK
        self.call[lane] = call
        self.result[lane] = _PENDING
        self.nrun -= 1
        self.groups.setdefault(call.key, []).append(lane)

    def enter_barrier(self, lane: int, gen: int, site) -> None:
        self.status[lane] = SYNC
        self.gen[lane] = gen
        self.sync_site[lane] = site
        self.nrun -= 1
        self.at_barrier.add(lane)

    def leave_barrier(self, lane: int) -> None:
        if self.status[lane] == SYNC:
            self.status[lane] = RUN
            self.nrun += 1
        self.at_barrier.discard(lane)

    def finish(self, lane: int) -> None:
        status = self.status[lane]
        if status == RUN:
            self.nrun -= 1
        elif status == PARK and self.call[lane] is not None:
            members = self.groups.get(self.call[lane].key)
            if members and lane in members:
                members.remove(lane)
                if not members:
                    del self.groups[self.call[lane].key]
        self.at_barrier.discard(lane)
        self.status[lane] = DONE
        self.call[lane] = None
        self.live &= ~(1 << lane)


class _Block:
    def __init__(self, block_dim, warp_size: int):
        self.lock = threading.Lock()
        self.W = warp_size
        self.full = (1 << warp_size) - 1
        self.dim = tuple(block_dim) + (1,) * (3 - len(block_dim))
        n = int(np.prod(self.dim))
        self.warps = [_Warp(self, k, min(warp_size, n - k * warp_size))
                      for k in range((n + warp_size - 1) // warp_size)]
        self.idx = None                      # the block's index, from its first thread
        self.failed = False
        self.primary = None                  # the first thread that failed (its report wins)
        self.detected: BaseException | None = None
        self.released_gen = 0                # barriers the block has passed
        self.timeout = float(os.environ.get(TIMEOUT_ENV, "60"))
        self.strict = os.environ.get(UNDEFINED_ENV, "poison").strip().lower() == "error"
        self.split = os.environ.get(ACTIVEMASK_ENV, "split").strip().lower() != "converged"

    # naming things in messages
    def thread_of(self, warp: int, lane: int) -> tuple[int, int, int]:
        t = warp * self.W + lane
        x, y = self.dim[0], self.dim[1]
        return (t % x, (t // x) % y, t // (x * y))

    def where(self) -> str:
        _dim = cpu_mode.dim_text
        return f"block {_dim(self.idx or (0, 0, 0))}"

    def lanes_text(self, warp: int, lanes) -> str:
        _dim = cpu_mode.dim_text
        lanes = sorted(lanes)
        runs, start = [], None
        for i, lane in enumerate(lanes):
            if start is None:
                start = lane
            if i + 1 == len(lanes) or lanes[i + 1] != lane + 1:
                runs.append(f"{start}" if start == lane else f"{start}-{lane}")
                start = None
        word = "lane" if len(lanes) == 1 else "lanes"
        text = f"{word} {', '.join(runs)} of warp {warp}"
        if len(lanes) == 1:
            text = f"thread {_dim(self.thread_of(warp, lanes[0]))} ({text})"
        return text

    def who(self, warp: int, lanes, verb: str) -> str:
        """'lanes 0-3 of warp 0 call' / 'thread 5 (lane 5 of warp 0) calls'."""
        lanes = list(lanes)
        return f"{self.lanes_text(warp, lanes)} {verb + 's' if len(lanes) == 1 else verb}"

    def mask_text(self, mask: int) -> str:
        return f"0x{mask:0{self.W // 4}x}"

    def fail(self, error: BaseException, lanes: list[tuple[_Warp, int]]) -> None:
        """Stop the block: ``lanes`` raise ``error``, every other waiting lane stops quietly."""
        if self.failed:
            return
        self.failed = True
        self.detected = error
        for warp, lane in lanes:
            warp.error[lane] = error
        for warp in self.warps:
            warp.cond.notify_all()


def _show(site) -> str:
    if not site:
        return "an unknown line"
    filename, line = site
    text = linecache.getline(filename, line).strip()
    return f"line {line}" + (f" `{text}`" if text else "")


def _op_name(op: str) -> str:
    return f"cuda.{op}()" if op in ("activemask", "syncwarp") else f"cuda.{op}"


# -- the rendezvous --------------------------------------------------------------------------------

def _diagnose(warp: _Warp, members: list[int]):
    """Why the lanes ``members`` (parked with one key) cannot go on, once the warp is still:
    None (they wait for an activemask() group), or (error, lanes that report it)."""
    blk = warp.block
    call = warp.call[members[0]]
    for p in range(warp.n):
        if not (call.mask >> p) & 1 or p in members or warp.status[p] == DONE:
            continue
        if warp.status[p] == SYNC:
            stuck = [q for q in range(warp.n) if warp.status[q] == SYNC and (call.mask >> q) & 1]
            error = WarpDeadlock(
                f"warp deadlock in {blk.where()}: {blk.who(warp.index, members, 'wait')} "
                f"at {_op_name(call.op)} ({_show(call.site)}) with mask "
                f"{blk.mask_text(call.mask)} for {blk.lanes_text(warp.index, stuck)}, which "
                f"wait{'s' * (len(stuck) == 1)} at cuda.syncthreads() "
                f"({_show(warp.sync_site[p])}). "
                "On a GPU this kernel hangs: a warp intrinsic goes on only when every lane named "
                "in its mask has called it, and cuda.syncthreads() only when every thread of the "
                "block has reached it.")
            return error, members
        other = warp.call[p]
        if other is None or other.op == "activemask":
            return None
        if other.mask & sum(1 << q for q in members):
            theirs = warp.groups.get(other.key, [p])
            what = "different intrinsics" if other.op != call.op else "different masks"
            error = WarpMismatch(
                f"warp intrinsics do not match in {blk.where()}: "
                f"{blk.who(warp.index, members, 'call')} {_op_name(call.op)} with mask "
                f"{blk.mask_text(call.mask)} ({_show(call.site)}) while "
                f"{blk.who(warp.index, theirs, 'call')} {_op_name(other.op)} with mask "
                f"{blk.mask_text(other.mask)} ({_show(other.site)}): {what}. Every lane named "
                "in a mask must call the same intrinsic with the same mask; otherwise CUDA leaves "
                "the result undefined, and a GPU may hang.")
            return error, members + theirs
    return None


def _source(op: str, lane: int, b: int, W: int) -> int:
    """PTX shfl.sync with Numba's clamp (W-1, or 0 for up) and no segments, W lanes."""
    bval = b & (W - 1)
    if op == "shfl_sync":
        return bval
    if op == "shfl_up_sync":
        j = lane - bval
        return j if j >= 0 else lane
    if op == "shfl_down_sync":
        j = lane + bval
        return j if j <= W - 1 else lane
    return lane ^ bval                                  # shfl_xor_sync


def _complete(warp: _Warp, group: list[int]) -> None:
    """Serve the lanes ``group`` (all parked with one key): compute what each gets, order their
    memory, wake them."""
    blk = warp.block
    key = warp.call[group[0]].key
    if warp.groups.get(key) is group:
        del warp.groups[key]
    op, members = key[0], set(group)
    results = {}
    if op.startswith("shfl"):
        for p in group:
            call = warp.call[p]
            j = _source(op, p, call.arg, blk.W)
            if j == p or j in members:
                results[p] = warp.call[j].value
                continue
            if j < warp.n and call.mask_site is not None and not (call.mask >> j) & 1:
                blk.fail(_outside_active_mask(warp, p, j, op, call), [(warp, p)])
                return
            if j >= warp.n:
                why = (f"lane {j}, which does not exist (warp {warp.index} of this block has "
                       f"only {warp.n} lanes)")
            elif not (call.mask >> j) & 1:
                why = f"lane {j}, which is not in the mask {blk.mask_text(call.mask)}"
            else:
                why = f"lane {j}, which had finished the kernel"
            text = (f"{blk.lanes_text(warp.index, [p])} read the value of {why}, with "
                    f"{_op_name(op)} ({_show(call.site)})")
            if blk.strict:
                error = WarpUndefinedRead(
                    f"undefined warp read in {blk.where()}: {text}. On a GPU that value is "
                    f"unpredictable (CPU mode returns poison unless {UNDEFINED_ENV}=error).")
                blk.fail(error, [(warp, p)])
                return
            notes = _state["notes"]
            if len(notes) < 20:
                notes.append(f"{blk.where()}: {text}")
            results[p] = _poison(call.value)
    elif op in ("ballot_sync", "all_sync", "any_sync", "eq_sync"):
        preds = [warp.call[p].value for p in group]
        value = {"ballot_sync": lambda: Word(sum(1 << p for p, v in zip(group, preds) if v),
                                             blk.W, True),
                 "all_sync": lambda: all(preds), "any_sync": lambda: any(preds),
                 "eq_sync": lambda: len(set(preds)) == 1}[op]()
        results = dict.fromkeys(group, value)
    elif op == "match_any_sync":
        by_key: dict = {}
        for p in group:
            by_key.setdefault(warp.call[p].value, []).append(p)
        for same in by_key.values():
            value = Word(sum(1 << q for q in same), blk.W, True)
            results.update(dict.fromkeys(same, value))
    elif op == "match_all_sync":
        same = len({warp.call[p].value for p in group}) == 1
        value = (Word(sum(1 << q for q in group) if same else 0, blk.W, True), same)
        results = dict.fromkeys(group, value)
    elif op == "activemask":
        site = warp.call[group[0]].site
        results = dict.fromkeys(group, ActiveMask(sum(1 << p for p in group), blk.W, site))
    else:                                                  # syncwarp
        results = dict.fromkeys(group)
    if op != "activemask":
        # Memory ordering among the group: one new clock, the elementwise maximum of theirs, with
        # each member's own entry advanced; shared by them and never changed afterwards.
        clocks = [warp.clock[p] for p in group if warp.clock[p] is not None]
        merged = [max(column) for column in zip(*clocks)] if clocks else [0] * warp.n
        for p in group:
            merged[p] += 1
        for p in group:
            warp.clock[p] = merged
    for p in group:
        warp.result[p] = results[p]
        warp.status[p] = RUN
        warp.call[p] = None
    warp.nrun += len(group)
    warp.moved = time.monotonic()
    warp.cond.notify_all()


FULL_MASK_TEXT = "~uint64(0) >> (64 - cuda.warpsize)"


def _outside_active_mask(warp: _Warp, lane: int, j: int, op: str, call: _Call) -> WarpError:
    """The error for a shuffle whose mask came from activemask() and whose source lane ``j`` is
    not in it: the lanes a reduction needs were not all converged where the mask was taken."""
    blk = warp.block
    return WarpActiveMaskRead(
        f"shuffle outside its mask in {blk.where()}: {blk.lanes_text(warp.index, [lane])} read "
        f"lane {j} with {_op_name(op)} ({_show(call.site)}), but lane {j} is not in the mask "
        f"{blk.mask_text(call.mask)}, which cuda.activemask() returned at "
        f"{_show(call.mask_site)}. activemask() names only the lanes that happen to run together "
        "at that instant, not the lanes that must take part: a GPU may run a warp's lanes apart "
        "there (independent thread scheduling, Volta and later), and CPU mode splits them on "
        "purpose. Give the shuffle a mask that names every lane of the warp, built from the warp "
        f"size ({FULL_MASK_TEXT}), and let every lane named in it call the shuffle (lanes with no "
        "element take part with 0).")


def _first_to_arrive(warp: _Warp, key, members: list[int]) -> list[int]:
    """The lanes of an activemask() group that CPU mode lets through first: a seeded part of
    them (never all, when there are two or more; always at least one), the same on every run of
    the same launch. The rest stay parked and are served later, on their own."""
    if not warp.block.split or len(members) < 2:
        return members
    warp.releases += 1
    lines = tuple(line for _, line in key[1])
    seed = zlib.crc32(repr((warp.block.idx, warp.index, lines, warp.releases)).encode())
    rng = random.Random(seed)
    members.sort()          # lane order, not arrival order: the threads' schedule is not ours
    first = [p for p in members if rng.random() < 0.5]
    if not first:
        first = [rng.choice(members)]
    elif len(first) == len(members):
        first.remove(rng.choice(first))
    for p in first:
        members.remove(p)
    return first


def _ready(warp: _Warp, key) -> bool:
    members = warp.groups.get(key)
    return bool(members) and key[0] != "activemask" and \
        len(members) == bin(key[1] & warp.live).count("1")


def _progress(warp: _Warp, keys=None) -> None:
    """After a change in ``warp``: serve the groups (among ``keys``, or all) whose lanes have all
    come; once the warp is still, report a deadlock or release an activemask() group."""
    blk = warp.block
    if blk.failed:
        return
    warp.moved = time.monotonic()
    for key in list(warp.groups if keys is None else keys):
        if _ready(warp, key):
            _complete(warp, warp.groups[key])
            if blk.failed:
                return
    if not warp.still() or not warp.groups:
        return
    # Every lane is parked, blocked at a barrier, or finished, and some wait at a warp
    # intrinsic: nothing else can happen in this warp without a decision here.
    waiting = [(key, members) for key, members in warp.groups.items()
               if key[0] != "activemask"]
    for key, members in waiting:
        found = _diagnose(warp, members)
        if found is not None:
            error, lanes = found
            blk.fail(error, [(warp, p) for p in lanes])
            return
    at_mask = [key for key in warp.groups if key[0] == "activemask"]
    if at_mask:
        # The activemask() call earliest in the source text goes first: lanes released there run
        # on and may join the others further down. In "split" mode only part of them goes.
        key = min(at_mask, key=lambda k: k[1])
        _complete(warp, _first_to_arrive(warp, key, warp.groups[key]))
        return
    parts = [f"{blk.who(warp.index, members, 'wait')} at {_op_name(key[0])} with mask "
             f"{blk.mask_text(key[1])} ({_show(warp.call[members[0]].site)})"
             for key, members in waiting[:6]]
    error = WarpDeadlock(
        f"warp deadlock in {blk.where()}: the lanes of warp {warp.index} wait for each other "
        f"and none can go on: {'; '.join(parts)}{' ...' * (len(waiting) > 6)}. Lanes named in "
        "each other's masks must call the same intrinsic with the same mask.")
    blk.fail(error, [(warp, p) for _, members in waiting for p in members])


_SIMULATOR = os.sep + "simulator" + os.sep
_OURS = (__file__, os.path.join(os.path.dirname(__file__), "races.py"))


def _internal(filename: str) -> bool:
    return filename in _OURS or _SIMULATOR in filename


def _kernel_frame():
    """The frame of the kernel (or device function) line that called into us."""
    frame = sys._getframe(2)
    while frame is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _frame_site(frame) -> tuple:
    """The lines of the kernel and device functions that led to this call, outermost first."""
    sites = []
    while frame is not None:
        name = frame.f_code.co_filename
        if name.endswith("threading.py"):
            break
        if not _internal(name):
            sites.append((name, frame.f_lineno))
        frame = frame.f_back
    return tuple(reversed(sites))


def _collective(op: str, mask, value=None, arg=0):
    thread = threading.current_thread()
    blk: _Block | None = getattr(getattr(thread, "_manager", None), "_aag_block", None)
    if blk is None:
        raise RuntimeError(f"{_op_name(op)} can only be called inside a kernel")
    warp, lane = blk.warps[thread._aag_warp], thread._aag_lane
    frame = _kernel_frame()
    site = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
    mask_site = None
    if op == "activemask":
        mask = blk.full
        frame_site = _frame_site(frame)
    else:
        mask_site = (mask.site or ()) if isinstance(mask, ActiveMask) else None
        mask = int(mask) & blk.full
        frame_site = None
        if not (mask >> lane) & 1:
            raise WarpMaskError(
                f"warp intrinsic misuse in {blk.where()}: {blk.lanes_text(warp.index, [lane])} "
                f"called {_op_name(op)} with mask {blk.mask_text(mask)}, which leaves out its own "
                f"lane ({_show(site)}). CUDA leaves this undefined: every lane that calls a "
                "*_sync intrinsic must be named in its mask. Name every lane of the warp with a "
                f"mask built from the warp size ({FULL_MASK_TEXT}: a literal 0xffffffff names "
                "only 32 lanes) and let them all call it, or, for the lanes of one branch only, "
                "take cuda.ballot_sync(full_mask, condition) before the branch.")
    with blk.lock:
        if blk.failed:
            raise _Aborted("another thread of the block failed")
        call = _Call(op, mask, value, arg, site, frame_site, mask_site)
        warp.park(lane, call)
        _progress(warp, [call.key])
        waited_from = time.monotonic()
        while True:
            result = warp.result[lane]
            if result is not _PENDING:
                warp.result[lane] = _PENDING
                return result
            if warp.error[lane] is not None:
                raise warp.error[lane]
            if blk.failed or thread.abort:
                raise _Aborted("another thread of the block failed")
            now = time.monotonic()
            quiet = now - max(waited_from, warp.moved)
            if quiet >= blk.timeout:
                call = warp.call[lane]
                late = [p for p in range(warp.n) if (call.mask >> p) & 1 and warp.running(p)]
                error = WarpDeadlock(
                    f"warp timeout in {blk.where()}: {blk.lanes_text(warp.index, [lane])} waited "
                    f"{quiet:.0f} s at {_op_name(op)} ({_show(site)}) for "
                    f"{blk.lanes_text(warp.index, late) if late else 'the rest of its warp'}, "
                    "still running and never arriving: a loop that never ends, or a lane waiting "
                    "for something that a lane stuck here would do? (On a GPU it would hang; set "
                    f"{TIMEOUT_ENV} to wait longer.)")
                blk.fail(error, [(warp, lane)])
                raise error
            warp.cond.wait(min(0.5, blk.timeout - quiet + 0.01))


# -- the intrinsics as CPU mode's cuda module offers them ------------------------------------------

FULL = object()   # syncwarp()'s default: every lane of the warp


def shfl_sync(mask, value, src_lane):
    _value_kind(value, "shfl_sync")
    return _collective("shfl_sync", mask, value, _lane_arg(src_lane, "shfl_sync"))


def shfl_up_sync(mask, value, delta):
    _value_kind(value, "shfl_up_sync")
    return _collective("shfl_up_sync", mask, value, _lane_arg(delta, "shfl_up_sync"))


def shfl_down_sync(mask, value, delta):
    _value_kind(value, "shfl_down_sync")
    return _collective("shfl_down_sync", mask, value, _lane_arg(delta, "shfl_down_sync"))


def shfl_xor_sync(mask, value, lane_mask):
    _value_kind(value, "shfl_xor_sync")
    return _collective("shfl_xor_sync", mask, value, _lane_arg(lane_mask, "shfl_xor_sync"))


def _lane_arg(b, what: str) -> int:
    if isinstance(b, (float, np.floating, bool, np.bool_)):
        raise TypeError(f"{what}: the lane argument must be an integer, not {b!r}")
    return int(b)


def ballot_sync(mask, predicate):
    return _collective("ballot_sync", mask, _predicate(predicate, "ballot_sync"))


def all_sync(mask, predicate):
    return _collective("all_sync", mask, _predicate(predicate, "all_sync"))


def any_sync(mask, predicate):
    return _collective("any_sync", mask, _predicate(predicate, "any_sync"))


def eq_sync(mask, predicate):
    return _collective("eq_sync", mask, _predicate(predicate, "eq_sync"))


def match_any_sync(mask, value):
    kind = _value_kind(value, "match_any_sync")
    return _collective("match_any_sync", mask, (kind[0], bits_of(value)))


def match_all_sync(mask, value):
    kind = _value_kind(value, "match_all_sync")
    return _collective("match_all_sync", mask, (kind[0], bits_of(value)))


def syncwarp(mask=FULL):
    if mask is FULL:
        thread = threading.current_thread()
        blk = getattr(getattr(thread, "_manager", None), "_aag_block", None)
        mask = blk.full if blk is not None else -1
    _collective("syncwarp", mask)


def activemask():
    return _collective("activemask", None)


def lanemask_lt():
    thread = threading.current_thread()
    W = thread._manager._aag_block.W
    return Word((1 << thread._aag_lane) - 1, W, False)


_INTRINSICS = {f.__name__: f for f in (
    shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, ballot_sync, all_sync, any_sync,
    eq_sync, match_any_sync, match_all_sync, syncwarp, activemask, lanemask_lt,
    popc, ffs, clz, brev)}

_state: dict = {"installed": False, "notes": []}


def undefined_reads() -> list[str]:
    """What the last launch read from lanes that did not take part (the first 20), in words."""
    return list(_state["notes"])


def _extend(module) -> None:
    _state["notes"] = []
    for name, fn in _INTRINSICS.items():
        setattr(module, name, fn)


def install() -> None:
    """Hook the simulator (CPU mode only): warp state per block, lanes, barriers, intrinsics."""
    if _state["installed"]:
        return
    from numba.cuda.simulator import kernel, kernelapi

    manager_init, manager_run = kernel.BlockManager.__init__, kernel.BlockManager.run
    thread_init, thread_run = kernel.BlockThread.__init__, kernel.BlockThread.run
    sync = kernel.BlockThread.syncthreads

    def block_init(self, f, grid_dim, block_dim, debug):
        manager_init(self, f, grid_dim, block_dim, debug)
        self._aag_block = _Block(block_dim, cpu_mode.warp_size())

    def block_run(self, grid_point, *args):
        blk = self._aag_block
        blk.idx = tuple(grid_point)
        try:
            manager_run(self, grid_point, *args)
        except _Aborted:
            # Report what went wrong first, not a thread that stopped because of it.
            if blk.primary is not None and blk.primary.exception is not None:
                exc, tb = blk.primary.exception
                raise exc.with_traceback(tb) from None
            if blk.detected is not None:
                raise blk.detected from None
            raise

    def lane_init(self, f, manager, blockIdx, threadIdx, debug):
        thread_init(self, f, manager, blockIdx, threadIdx, debug)
        blk = getattr(manager, "_aag_block", None)
        self._aag_warp, self._aag_lane = divmod(self.thread_id, blk.W if blk else 32)

    def lane_run(self):
        try:
            thread_run(self)
        finally:
            blk = getattr(self._manager, "_aag_block", None)
            primary = False
            if blk is not None:
                with blk.lock:
                    warp = blk.warps[self._aag_warp]
                    warp.finish(self._aag_lane)
                    failed = self.exception is not None and not issubclass(
                        type(self.exception[0]), _Aborted)
                    if failed and blk.primary is None:
                        blk.primary, primary = self, True
                        if not blk.failed:
                            blk.failed = True
                            for w in blk.warps:
                                w.cond.notify_all()
                    elif not blk.failed:
                        _progress(warp)
            if primary:
                # Stay alive until the block's manager has seen this failure: it looks only at
                # live threads, so a thread that dies between two of its looks goes unseen, and
                # with a lane that never ends (the case of a warp timeout) the launch would never
                # return.
                deadline = time.monotonic() + 30
                while not self.abort and time.monotonic() < deadline:
                    time.sleep(0.002)

    def syncthreads(self):
        blk = getattr(self._manager, "_aag_block", None)
        if blk is None:
            return sync(self)
        warp, lane = blk.warps[self._aag_warp], self._aag_lane
        frame = _kernel_frame()
        with blk.lock:
            warp.enter_barrier(lane, getattr(self, "_aag_barriers", 0),
                               (frame.f_code.co_filename, frame.f_lineno) if frame else None)
            _progress(warp, ())               # no call can complete; the warp may be still now
        try:
            sync(self)
        finally:
            with blk.lock:
                self._aag_barriers = getattr(self, "_aag_barriers", 0) + 1
                blk.released_gen = max(blk.released_gen, self._aag_barriers)
                warp.leave_barrier(lane)
                warp.moved = time.monotonic()

    kernel.BlockManager.__init__ = block_init
    kernel.BlockManager.run = block_run
    kernel.BlockThread.__init__ = lane_init
    kernel.BlockThread.run = lane_run
    kernel.BlockThread.syncthreads = syncthreads
    kernelapi.FakeCUDAModule.laneid = property(
        lambda self: threading.current_thread()._aag_lane)
    cpu_mode.extension(_extend)
    _state["installed"] = True


def vector_clock(thread) -> tuple[int, int, list[int] | None]:
    """(warp, lane, clock) of a simulated thread, for the race detector."""
    blk = getattr(getattr(thread, "_manager", None), "_aag_block", None)
    if blk is None:
        return (0, 0, None)
    return (thread._aag_warp, thread._aag_lane, blk.warps[thread._aag_warp].clock[thread._aag_lane])
