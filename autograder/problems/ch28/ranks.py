"""Ranks of one process, each with its own GPU, buffer and stream: what a learner's all-reduce is
given (:class:`Ranks`, a list of :class:`Rank`).

NCCL's single-process mode drives all of a node's GPUs from one host thread, and so does this:
``ring_allreduce(ranks)`` loops over the ranks and queues, on each rank's stream, its copies to
the next rank (:meth:`Rank.send`) and its additions (:meth:`Rank.launch` of the learner's kernel).

**Real or simulated.** With at least as many GPUs as ranks, rank ``r`` is GPU ``r``: its arrays
are allocated in that GPU's context, its stream belongs to it, and a send is a peer copy
(``cuMemcpyPeerAsync``, over NVLink or PCIe). With fewer GPUs (one GPU, or CPU mode and the
simulator) every rank lives on the one device: its buffer is a separate allocation there and a
send is an ordinary device-to-device copy. The learner's code is the same either way; what a
simulation cannot show is link bandwidth and GPUs working at the same time.

**Ordering.** Each rank queues its work on its own stream, so two ranks' work is unordered
unless something orders it: :meth:`Rank.wait_for` (the stream waits for another's queued work,
an event in CUDA terms), :meth:`Rank.synchronize` or :meth:`Ranks.synchronize` (the host waits).
:class:`Order` keeps a vector clock per stream and checks every send and launch against the
earlier ones that touch the same bytes: two of them unordered, one writing, is a race (a chunk
read while another rank overwrites it), reported as :class:`RankRace` at once, in CPU mode as on
a GPU, whether or not the timing of this run happened to hide it.

**Out of reach.** The ordering check, the counts and each rank's arrays and stream as made live
in a closure (:func:`_engine`); :class:`Rank` and :class:`Ranks` only call into it, and the check
of exercise 28.1 holds its own handle (:func:`open_ranks`). Rebinding ``r.index``, ``ranks.order``
or a method of these classes changes what the learner's code sees, not what is checked.
"""

from __future__ import annotations

import builtins as _builtins
import contextlib
import dis as _dis
from types import BuiltinFunctionType as _BuiltinFunctionType
from types import CodeType as _CodeType
from types import FunctionType as _FunctionType
from types import ModuleType as _ModuleType

import numpy as np


class RankRace(RuntimeError):
    """Two queued operations of different ranks touch the same bytes, one writing, unordered."""


class RankUsageError(ValueError):
    """A send or a launch that does not fit the ranks (an array of another rank, a size)."""


def _span(array) -> tuple[int, int]:
    """The bytes ``[lo, hi)`` a device array (or view) covers: from the CUDA array interface on a
    GPU, from the host array behind a simulator array in CPU mode (read past its hooks)."""
    host = getattr(array, "__dict__", {}).get("_ary")
    if isinstance(host, np.ndarray):
        face = host.__array_interface__
    else:
        face = array.__cuda_array_interface__
    ptr = int(face["data"][0])
    itemsize = np.dtype(face["typestr"]).itemsize
    shape, strides = face["shape"], face.get("strides")
    if not shape or 0 in shape:
        return ptr, ptr
    if strides is None:
        return ptr, ptr + int(np.prod(shape)) * itemsize
    lo = ptr + sum(min(0, s) * (n - 1) for s, n in zip(strides, shape))
    hi = ptr + sum(max(0, s) * (n - 1) for s, n in zip(strides, shape)) + itemsize
    return lo, hi


def _is_device_array(value) -> bool:
    """A device array: a simulator array in CPU mode, anything with the CUDA array interface on a
    GPU (looked up without the simulator's ``__getattr__``, which would count as a host access)."""
    if isinstance(getattr(value, "__dict__", {}).get("_ary"), np.ndarray):
        return True
    return not isinstance(value, np.ndarray) and hasattr(type(value), "__cuda_array_interface__")


def _join(into: list[int], other: list[int]) -> None:
    for k, v in enumerate(other):
        if v > into[k]:
            into[k] = v


def _name(names, lo: int, hi: int) -> str:
    """What the bytes ``[lo, hi)`` are part of: "rank 1's recv"."""
    for a, b, what in names:
        if a <= lo < b or (lo < a < hi):
            return what
    return "an array"


class Order:
    """Happens-before among the ranks' streams and the host: a vector clock per stream (one
    component per stream), and a log of the byte ranges each queued operation reads or writes.

    Its methods bind the helpers they use when they are defined (default arguments), and
    :class:`Ranks` keeps its own copies of them: rebinding a name in this module, or a method of
    the class, afterwards does not change the check of ranks already made or being made."""

    def __init__(self, streams: int):
        self.n = streams
        self.host = [0] * streams
        self.clock = [[0] * streams for _ in range(streams)]
        # lo, hi, writes, stream, tick, what, verb
        self.log: list[tuple[int, int, bool, int, int, str, str]] = []
        self.names: list[tuple[int, int, str]] = []     # lo, hi, "rank 1's recv"

    def name(self, lo: int, hi: int, _name=_name) -> str:
        """What the bytes ``[lo, hi)`` are part of: "rank 1's recv"."""
        return _name(self.names, lo, hi)

    def queue(self, stream: int, accesses: list[tuple[int, int, bool]], what: str,
              verb: str = "", _join=_join, _name=_name, _race=RankRace) -> None:
        """An operation queued on ``stream`` by the host, touching ``accesses`` (lo, hi, writes);
        ``verb`` says how, for a kernel that reads and writes its arguments ("uses")."""
        vc = self.clock[stream]
        _join(vc, self.host)             # after everything the host has waited for
        vc[stream] += 1
        for lo, hi, writes in accesses:
            if hi <= lo:
                continue
            for lo2, hi2, writes2, s2, t2, what2, verb2 in self.log:
                if s2 != stream and (writes or writes2) and lo < hi2 and lo2 < hi and t2 > vc[s2]:
                    mine = verb or ("writes into" if writes else "reads")
                    theirs = verb2 or ("writes into" if writes2 else "reads")
                    raise _race(
                        f"{what} {mine} {_name(self.names, max(lo, lo2), min(hi, hi2))}, which "
                        f"{what2} (queued earlier, on another rank's stream) {theirs}, and "
                        "nothing orders the two: on GPUs they may run at the same time, a chunk "
                        "read while it is being overwritten. Order them with r.wait_for(other), "
                        "r.synchronize() or ranks.synchronize()")
        tick = vc[stream]
        self.log.extend((lo, hi, writes, stream, tick, what, verb) for lo, hi, writes in accesses
                        if hi > lo)

    def wait(self, stream: int, other: int, _join=_join) -> None:
        """``stream`` waits for everything queued on ``other`` so far."""
        _join(self.clock[stream], self.clock[other])

    def sync(self, stream: int, _join=_join) -> None:
        """The host waits for ``stream``."""
        _join(self.host, self.clock[stream])
        host = self.host
        self.log = [e for e in self.log if e[4] > host[e[3]]]

    def sync_all(self, _join=_join) -> None:
        for s in range(self.n):
            _join(self.host, self.clock[s])
        self.log.clear()


_QUEUE, _WAIT, _SYNC, _SYNC_ALL = Order.queue, Order.wait, Order.sync, Order.sync_all
# A rank's memory while the check holds it (guarded, CPU mode): a NaN no arithmetic makes.
DECOY = _DECOY = np.uint32(0x7FE5A5A5)


class Rank:
    """One rank: its number ``index`` of ``size``, its GPU ``device`` (a context manager: ``with
    r.device:`` makes it the current one), its float32 ``buf`` (what it all-reduces, in place),
    ``recv`` (a receive buffer of ``chunk_max`` elements on the same GPU) and its ``stream``.

    What a send, a launch or a wait does, and the ordering check, live in the :class:`Ranks`'
    engine (:func:`_engine`), out of reach of these attributes: changing ``r.index`` or ``r.buf``
    changes only what the learner's own code reads."""

    def __init__(self, ranks: "Ranks", index: int, gpu, data: np.ndarray, chunk_max: int):
        self._ranks = ranks
        self.index = index
        self.size = ranks.size
        self.device = gpu
        with gpu:
            from numba import cuda
            self.stream = cuda.stream()
            self.buf = cuda.to_device(np.ascontiguousarray(data, np.float32), stream=self.stream)
            self.recv = cuda.to_device(np.full(chunk_max, np.nan, np.float32), stream=self.stream)
            self.stream.synchronize()
        self._spans = [_span(self.buf), _span(self.recv)]

    def __repr__(self) -> str:
        where = "simulated" if self._ranks.simulated else f"GPU {self._ranks.gpu_ids[self.index]}"
        return (f"<rank {self.index} of {self.size} ({where}): buf of {self.buf.shape[0]}, "
                f"recv of {self.recv.shape[0]}>")

    def owns(self, array) -> bool:
        lo, hi = _span(array)
        return any(a <= lo and hi <= b for a, b in self._spans) or hi == lo

    # -- what the learner calls --------------------------------------------------------------------
    def send(self, chunk, to: "Rank", into=None) -> None:
        """Copy ``chunk`` (a view of this rank's ``buf`` or ``recv``) to rank ``to``: into the start
        of its ``recv`` (default) or into ``into`` (a view of an array of rank ``to``, as long as
        ``chunk``). Queued on this rank's stream: it returns before the copy is done."""
        self._ops.send(self, chunk, to, into)

    def launch(self, kernel, blocks, threads, *args) -> None:
        """``kernel[blocks, threads, stream](*args)`` on this rank's GPU and stream. Every device
        array among ``args`` counts as read and written by the kernel (for the ordering check);
        each must be this rank's."""
        self._ops.launch(self, kernel, blocks, threads, args)

    def wait_for(self, other: "Rank") -> None:
        """This rank's stream waits for everything queued so far on ``other``'s stream (an event
        recorded there, waited for here); the host does not wait."""
        self._ops.wait(self, other)

    def synchronize(self) -> None:
        """The host waits until this rank's queued work is done."""
        self._ops.sync(self)


def _event():
    from numba import cuda
    return cuda.event(timing=False)


class Ranks(list):
    """The ranks of one all-reduce, ``ranks[0] .. ranks[size - 1]``; ``simulated`` says whether
    they share one device, ``gpu_ids`` which GPU each rank is on."""

    def __init__(self, data: list[np.ndarray], *, real: bool | None = None):
        from numba import cuda
        super().__init__()
        self.size = len(data)
        if self.size < 1:
            raise ValueError("at least one rank")
        m = int(data[0].shape[0])
        gpus = _gpu_count()
        self.simulated = not (gpus >= self.size if real is None else real)
        if not self.simulated and gpus < self.size:
            raise RuntimeError(f"{self.size} ranks on real GPUs need {self.size} GPUs; this "
                               f"machine has {gpus}")
        self.gpu_ids = [0] * self.size if self.simulated else list(range(self.size))
        self.chunk_max = -(-m // self.size)
        for r, part in enumerate(data):
            self.append(Rank(self, r, _device(self.gpu_ids[r], self.simulated), part,
                             self.chunk_max))
        if not self.simulated:
            _enable_peers(self.gpu_ids)
        self._cuda = cuda
        ops, audit = _engine(list(self), self.simulated)
        self._ops = ops
        for r in self:
            r._ops = ops
        self.__dict__["_audit"] = audit       # taken by open_ranks, before any learner code

    @property
    def sends(self) -> int:
        return self._ops.counts()[0]

    @property
    def launches(self) -> int:
        return self._ops.counts()[1]

    def synchronize(self) -> None:
        """The host waits until every rank's queued work is done."""
        self._ops.sync_all()

    def gather(self) -> list[np.ndarray]:
        """Every rank's buffer, on the host (after :meth:`synchronize`)."""
        return self._ops.gather()

    def chunk(self, k: int, m: int | None = None) -> tuple[int, int]:
        """The elements ``[lo, hi)`` of chunk ``k`` of a buffer of ``m`` (this one's by default):
        ``k * m // size`` to ``(k + 1) * m // size``."""
        m = self[0].buf.shape[0] if m is None else m
        return k * m // self.size, (k + 1) * m // self.size


def open_ranks(data: list[np.ndarray], *, real: bool | None = None):
    """:class:`Ranks` for a check, and their audit (what only the check holds): ``begin()`` before
    the learner's call, ``finish()`` after it (the first thing that went on behind the ranks'
    back, or None), ``gather()`` the buffers, ``size``, ``counts()`` (sends, launches)."""
    ranks = Ranks(data, real=real)
    return ranks, ranks.__dict__.pop("_audit")


def _engine(rank_list: list, simulated: bool):
    """What the ranks do, with the state it keeps in this closure only: the ordering check (an
    :class:`Order`), the counts, each rank's arrays and stream as made, and, while a check holds
    the ranks (``audit.begin()`` to ``audit.finish()``, CPU mode), their memory.

    While held, every rank's ``buf`` and ``recv`` hold a NaN decoy except inside the course's own
    operations: a send shows the true data of its two ranks for the copy, a launch that of its
    own rank only, for the kernel. So the host reads only the decoy, however it reads (a NumPy
    method of a simulator array, ``.base``, ``ranks.gather()``); a kernel that reads another
    rank's memory (a closure, a global, an argument object) reads the decoy; and anything that
    writes a rank's memory outside a send or a launch (the host, a copy or a kernel launched
    around them, a kernel writing another rank) changes the decoy, which the next operation and
    ``finish()`` find. Returns (ops, audit): the ranks' operations, and the check's view."""
    n = len(rank_list)
    ranks_of = tuple(rank_list)
    bufs = tuple(r.buf for r in ranks_of)
    recvs = tuple(r.recv for r in ranks_of)
    streams = tuple(r.stream for r in ranks_of)
    devices = tuple(r.device for r in ranks_of)
    spans = tuple((_span(b), _span(v)) for b, v in zip(bufs, recvs))
    order = Order(n)
    for i in range(n):
        order.names += [(*spans[i][0], f"rank {i}'s buf"), (*spans[i][1], f"rank {i}'s recv")]
    queue, wait_, sync_, sync_all_ = _QUEUE, _WAIT, _SYNC, _SYNC_ALL
    array_type = type(bufs[0])
    counts = [0, 0]                        # sends, launches
    held = [False]
    problems: list[str] = []               # what went on behind the ranks' back (held)
    memory = None
    if simulated and not _is_gpu():
        memory = tuple((b.__dict__["_ary"], v.__dict__["_ary"]) for b, v in zip(bufs, recvs))
    true = [None] * n                      # held: each rank's real contents

    def number(rank, what: str) -> int:
        for i, r in enumerate(ranks_of):
            if r is rank:
                return i
        raise RankUsageError(f"{what}: `to` is a rank of the same ranks (ranks[k]), not its "
                             "number" if what.startswith("send") else
                             f"{what}: not a rank of these ranks")

    def owner(i: int, array) -> bool:
        lo, hi = _span(array)
        return any(a <= lo and hi <= b for a, b in spans[i]) or hi == lo

    def device_array(value) -> bool:
        return _is_device_array(value)

    # -- held memory (CPU mode) -----------------------------------------------------------------
    def note(message: str) -> None:
        if len(problems) < 3:
            problems.append(message)

    def intact(where: str, skip=()) -> None:
        """Every held rank's memory still holds the decoy (but ``skip``'s, shown now)."""
        for i in range(n):
            if i in skip:
                continue
            for array, label in zip(memory[i], ("buf", "recv")):
                bad = array.view(np.uint32) != _DECOY
                if bad.any():
                    k = int(np.argmax(bad))
                    message = (f"rank {i}'s {label}[{k}] was changed {where}: a rank's memory "
                               "changes only through r.send (a copy into it) and that rank's own "
                               "kernel launched with r.launch")
                    note(message)
                    array.view(np.uint32)[...] = _DECOY
                    raise RankUsageError(message)

    def show(i: int) -> None:
        for array, real in zip(memory[i], true[i]):
            array[...] = real

    def hide(i: int) -> None:
        for array, real in zip(memory[i], true[i]):
            real[...] = array
            array.view(np.uint32)[...] = _DECOY

    def guarded() -> bool:
        return held[0] and memory is not None

    # -- the operations ----------------------------------------------------------------------------
    def send(rank, chunk, to, into) -> None:
        i = number(rank, "send")
        j = number(to, "send(chunk, to=...)")
        if into is None:
            into = recvs[j][:chunk.shape[0]] if chunk.shape[0] <= recvs[j].shape[0] else recvs[j]
        if not device_array(chunk) or not owner(i, chunk):
            raise RankUsageError(f"rank {i} can only send its own arrays (a view of its "
                                 "buf or recv)")
        if not device_array(into) or not owner(j, into):
            raise RankUsageError(f"rank {i} sent into an array that is not rank {j}'s buf or "
                                 "recv")
        if guarded() and not (type(chunk) is array_type and type(into) is array_type):
            raise RankUsageError(f"rank {i} sent something that is not a device array (a view "
                                 "of a buf or recv, as slicing one gives)")
        if tuple(chunk.shape) != tuple(into.shape):
            raise RankUsageError(f"rank {i} sent {tuple(chunk.shape)} elements into "
                                 f"{tuple(into.shape)} (rank {j}'s recv holds "
                                 f"{recvs[j].shape[0]})")
        if guarded():
            intact("between the ranks' operations (before a send)")
        lo, hi = _span(chunk)
        dlo, dhi = _span(into)
        queue(order, i, [(lo, hi, False), (dlo, dhi, True)], f"rank {i}'s send to rank {j}")
        counts[0] += 1
        if chunk.shape[0] == 0:
            return
        if not guarded():
            _copy(chunk, into, i, j, simulated, devices, streams)
            return
        show(i)
        show(j)
        try:
            _held_copy(chunk, into)
        finally:
            hide(i)
            if j != i:
                hide(j)

    def launch(rank, kernel, blocks, threads, args) -> None:
        i = number(rank, "launch")
        accesses = []
        for k, arg in enumerate(args):
            if device_array(arg):
                if not owner(i, arg):
                    raise RankUsageError(f"rank {i}'s kernel was given argument {k}, an array "
                                         "that is not its own: a kernel reads and writes its "
                                         "own GPU's memory (send the data first)")
                lo, hi = _span(arg)
                accesses.append((lo, hi, True))
        name = getattr(kernel, "__name__", None) or getattr(getattr(kernel, "py_func", None),
                                                            "__name__", "kernel")
        if guarded():
            leak = _kernel_leak(kernel, args, array_type)
            if leak:
                raise RankUsageError(f"rank {i}'s kernel {name}: {leak}")
            intact("between the ranks' operations (before a launch)")
        queue(order, i, accesses, f"rank {i}'s kernel {name}", "reads and writes")
        counts[1] += 1
        if not guarded():
            with devices[i]:
                kernel[blocks, threads, streams[i]](*args)
            return
        show(i)
        try:
            kernel[blocks, threads, streams[i]](*args)
        finally:
            try:
                intact(f"by rank {i}'s kernel {name}, which may touch only its own rank's "
                       "arrays", skip=(i,))
            finally:
                hide(i)

    def wait(rank, other) -> None:
        i = number(rank, "wait_for")
        j = number(other, "wait_for(other)")
        if guarded():
            intact("between the ranks' operations (before a wait)")
        if i == j:
            return
        wait_(order, i, j)
        with devices[j]:
            event = _event()
            event.record(streams[j])
        with devices[i]:
            event.wait(streams[i])

    def sync(rank) -> None:
        i = number(rank, "synchronize")
        if guarded():
            intact("between the ranks' operations (before a synchronize)")
        sync_(order, i)
        with devices[i]:
            streams[i].synchronize()

    def sync_all() -> None:
        if guarded():
            intact("between the ranks' operations (before a synchronize)")
        sync_all_(order)
        for i in range(n):
            with devices[i]:
                streams[i].synchronize()

    def gather() -> list[np.ndarray]:
        if held[0]:
            note("the ranks' buffers were gathered to the host during the all-reduce")
            raise RankUsageError("ranks.gather() copies every rank's buffer to the host: not "
                                 "during the all-reduce, whose data stays on the GPUs")
        return collect()

    def collect() -> list[np.ndarray]:
        for i in range(n):
            with devices[i]:
                streams[i].synchronize()
        out = []
        for i in range(n):
            if memory is not None:
                out.append(memory[i][0].copy())
            else:
                with devices[i]:
                    out.append(bufs[i].copy_to_host())
        return out

    # -- the check's side ----------------------------------------------------------------------------
    def begin() -> None:
        sync_all_(order)
        for i in range(n):
            with devices[i]:
                streams[i].synchronize()
        held[0] = True
        if memory is not None:
            for i in range(n):
                true[i] = tuple(a.copy() for a in memory[i])
                for a in memory[i]:
                    a.view(np.uint32)[...] = _DECOY

    def finish() -> str | None:
        if memory is not None and held[0]:
            try:
                intact("between the ranks' operations (after the last)")
            except RankUsageError:
                pass
            for i in range(n):
                show(i)
        held[0] = False
        return problems[0] if problems else None

    ops = _Namespace(send=send, launch=launch, wait=wait, sync=sync, sync_all=sync_all,
                     gather=gather, counts=lambda: tuple(counts))
    audit = _Namespace(begin=begin, finish=finish, gather=collect, size=n, buffers=bufs,
                       receives=recvs, counts=lambda: tuple(counts))
    return ops, audit


_BUILTINS = frozenset({"range", "len", "min", "max", "abs", "float", "int", "bool", "round"})
_WRITES = frozenset({"STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL", "IMPORT_NAME",
                     "IMPORT_FROM", "STORE_DEREF", "DELETE_DEREF"})


def _kernel_leak(kernel, args, array_type) -> str | None:
    """CPU mode, while a check holds the ranks: why this launch could carry data past the
    ranks, or None. The simulator runs a kernel as Python, so a "kernel" could keep what it reads
    in a global list for the host, or store values the host put in one; compiled for a GPU a
    kernel reads its arguments, and its globals are constants. So: arguments are this backend's
    device arrays, numbers or tuples of numbers; the kernel and the device functions it calls
    read only numbers, modules and other kernels from their globals and closures, and assign to
    no global, closure cell or attribute."""
    for k, arg in enumerate(args):
        if not (type(arg) is array_type or _constant(arg)):
            return (f"argument {k} is a {type(arg).__name__}: a kernel's arguments are device "
                    "arrays (its own rank's) and numbers")
    seen: set = set()
    todo = [kernel]
    while todo:
        item = todo.pop()
        fn = item.__dict__.get("fn") if type(item) is _simulator_kernel() else None
        if not isinstance(fn, _FunctionType):
            return "not a @cuda.jit kernel"
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        values = {}
        codes = [fn.__code__]
        while codes:
            code = codes.pop()
            codes += [c for c in code.co_consts if isinstance(c, _CodeType)]
            for ins in _dis.get_instructions(code):
                if ins.opname in _WRITES:
                    return (f"it assigns to {ins.argval!r} ({ins.opname}): a kernel stores only "
                            "into its array arguments")
            for name in code.co_names:
                if name in fn.__globals__:
                    values[name] = fn.__globals__[name]
                elif name in _builtins.__dict__ and name not in _BUILTINS:
                    return f"it uses the built-in {name}(), which no GPU kernel has"
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                values[name] = cell.cell_contents
            except ValueError:
                continue
        for name, value in values.items():
            if _kernel_like(value):
                todo.append(value)
            elif not (_constant(value) or _module_ok(value)):
                return (f"it reads `{name}` (a {type(value).__name__}) from outside: a kernel "
                        "gets its data from its arguments (compiled for a GPU, a global is a "
                        "constant, and memory of another rank is not its own)")
    return None


def _simulator_kernel():
    from numba.cuda.simulator.kernel import FakeCUDAKernel
    return FakeCUDAKernel


def _kernel_like(value) -> bool:
    """A kernel or device function (checked in turn), or something posing as one (refused)."""
    return type(value) is _simulator_kernel() or hasattr(value, "py_func") or \
        (hasattr(value, "fn") and hasattr(value, "__getitem__"))


def _constant(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, complex, str, np.number)):
        return True
    if isinstance(value, tuple):
        return all(_constant(v) for v in value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return True
    module = type(value).__module__ or ""
    return module.startswith("numba.core.types") or isinstance(value, np.dtype)


def _module_ok(value) -> bool:
    if isinstance(value, _ModuleType):
        name = value.__name__
        return name in ("math", "cmath", "numpy") or name == "numba" or name.startswith("numba.")
    return isinstance(value, _BuiltinFunctionType) and getattr(value, "__module__", "") in (
        "math", "cmath")


class _Namespace:
    """Named functions (the engine's closures)."""

    def __init__(self, **items):
        self.__dict__.update(items)


def _is_gpu() -> bool:
    from autograder.machine import device
    return device.current().is_gpu


def _held_copy(chunk, into) -> None:
    """The copy of a send while the check holds the ranks (CPU mode): the bytes themselves, and
    the recorder of the call told that a copy, not a kernel, wrote them."""
    src, dst = chunk.__dict__["_ary"], into.__dict__["_ary"]
    np.copyto(dst, src)
    from autograder.grading import provenance
    rec = provenance.active()
    if rec is not None and hasattr(rec, "lookup"):
        found = rec.lookup(into, dst)
        if found is not None and found[0].role == "out" and found[1] is not None:
            found[0].who[found[1].reshape(-1)] = provenance.COPIED


def _copy(chunk, into, i: int, j: int, simulated: bool, devices, streams) -> None:
    """The course's copy behind a send: a peer copy between two GPUs, or a device copy on the
    one device; queued on the sender's stream."""
    if simulated or devices[i] is devices[j]:
        with devices[i]:
            into.copy_to_device(chunk, stream=streams[i])
        return
    _peer_copy(into, devices[j], chunk, devices[i], streams[i])


def _gpu_count() -> int:
    from autograder.machine import device
    if not device.current().is_gpu:
        return 0
    from numba import cuda
    return len(cuda.gpus)


class _OneDevice:
    """The simulated ranks' device: the current one (CPU mode's simulator, or the one GPU)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self) -> str:
        return "<the one device>"


_ONE = _OneDevice()


def _device(gpu_id: int, simulated: bool):
    if simulated:
        return _ONE
    from numba import cuda
    return cuda.gpus[gpu_id]


def _enable_peers(gpu_ids: list[int]) -> None:
    """Peer access between every pair of the ranks' GPUs where the hardware allows it (NVLink or
    PCIe peer to peer); elsewhere the driver stages peer copies through the host."""
    from numba import cuda
    for a in gpu_ids:
        with cuda.gpus[a]:
            ctx = cuda.current_context()
            for b in gpu_ids:
                if a == b or not ctx.can_access_peer(b):
                    continue
                with cuda.gpus[b]:
                    peer = cuda.current_context()
                with contextlib.suppress(Exception):     # already enabled: fine
                    ctx.enable_peer_access(peer.handle)


def _peer_copy(into, to_device, chunk, source_device, stream) -> None:
    """``cuMemcpyPeerAsync`` from ``chunk`` (on the sender's GPU) into ``into`` (on ``to``'s), on
    the sender's stream; where the binding refuses the call, a device-to-device copy through the
    unified address space (the driver routes it between the two GPUs)."""
    from numba import cuda
    from numba.cuda.cudadrv import driver
    with to_device:
        dst_ctx = cuda.current_context()
    with source_device:
        src_ctx = cuda.current_context()
        try:
            driver.driver.cuMemcpyPeerAsync(driver.device_pointer(into), dst_ctx.handle,
                                            driver.device_pointer(chunk), src_ctx.handle,
                                            int(chunk.nbytes), stream.handle)
        except (TypeError, AttributeError):
            into.copy_to_device(chunk, stream=stream)
