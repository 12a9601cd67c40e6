"""The memory-access picture: are its counts what the kernel really did?

Each kernel is also run without Numba's simulator and without the course's recorder: its own
Python code (``kernel.py_func``), one Python thread per CUDA thread, with a barrier of our own and
array wrappers that log every element access (:class:`IndependentRun`). The recorder's counts
per thread, sectors per warp request and bank conflicts are checked against that log, and
against numbers worked out by hand.
"""

from __future__ import annotations

import collections
import linecache
import re
import sys
import threading
import types

import numpy as np
import pytest
from numba import cuda

import autograder as ag
from autograder.visual import access
from autograder.visual.access import AccessPictureError, access_picture, record_accesses

# Recording in this process needs CPU mode; on a GPU only the separate-process tests run.
cpu_only = pytest.mark.skipif(ag.backend.name != "cpu", reason="records in this process, which "
                              f"needs CPU mode; this run uses {ag.backend.label}")

T = 8            # tile width of the tiled matmul
OFFSET = 1       # used by a device function below (a module-level constant travels by value)


# ---- kernels ----------------------------------------------------------------------------------
@cuda.jit
def naive_matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


@cuda.jit
def tiled_matmul(a, b, c):
    sa = cuda.shared.array((T, T), np.float32)
    sb = cuda.shared.array((T, T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = 0.0
    for t in range(a.shape[1] // T):
        sa[ty, tx] = a[row, t * T + tx]
        sb[ty, tx] = b[t * T + ty, col]
        cuda.syncthreads()
        for k in range(T):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


@cuda.jit
def strided_copy(x, out, stride):
    i = cuda.grid(1)
    out[i] = x[i * stride]


def make_transpose_tile(width):
    """A 32 × ``width`` shared tile written by rows (lane = column) and read by columns (lane =
    row): with width 32 every lane of a column read hits one bank; padded to 33, 32 banks."""
    @cuda.jit
    def transpose_tile(x, out):
        tile = cuda.shared.array((32, width), np.float32)
        tx = cuda.threadIdx.x
        for k in range(32):
            tile[k, tx] = x[k, tx]
        cuda.syncthreads()
        for k in range(32):
            out[k, tx] = tile[tx, k]
        corner = tile[0, 0]          # every lane reads one word: a broadcast, no conflict
        out[0, tx] += corner * 0.0
    return transpose_tile


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def missing_barrier(x, out):
    s = cuda.shared.array(64, np.float32)
    i = cuda.threadIdx.x
    s[i] = x[i]
    out[i] = s[(i + 1) % 64]          # the neighbour may not have written it yet


@cuda.jit
def neighbour_after_barrier(out, res):
    i = cuda.threadIdx.x
    out[i] = i
    cuda.syncthreads()                # orders the writes above before the reads below
    res[i] = out[(i + 1) % out.size]


@cuda.jit
def count_plain(out):
    out[0] += 1                       # every thread of every block: a race across blocks


@cuda.jit
def count_atomic(out):
    cuda.atomic.add(out, 0, 1)


@cuda.jit(device=True)
def shifted(i):
    return i + OFFSET


@cuda.jit
def shifted_copy(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[shifted(i)]


# ---- the independent run ------------------------------------------------------------------------
class IndependentRun:
    """Runs ``kernel.py_func`` as plain Python: one thread per CUDA thread, blocks one after
    another, ``cuda`` replaced by this object. Logs (block, thread, space, array, flat element,
    kind, line) per access, in each thread's own order."""

    def __init__(self, kernel, blocks, threads, *args):
        self.blocks, self.threads = _dim3(blocks), _dim3(threads)
        self.log: list[tuple] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self._shared: dict = {}
        self.shared = types.SimpleNamespace(array=self._shared_array)
        self.warpsize = 32
        fn = kernel.py_func
        globs = dict(fn.__globals__, cuda=self)
        run = types.FunctionType(fn.__code__, globs, fn.__name__, fn.__defaults__, fn.__closure__)
        names = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
        self.arrays = {n: np.array(a) for n, a in zip(names, args) if isinstance(a, np.ndarray)}
        wrapped = [Logged(self, "global", n, self.arrays[n]) if n in self.arrays else a
                   for n, a in zip(names, args)]
        for block in _ndindex(self.blocks):
            barrier = threading.Barrier(int(np.prod(self.threads)))
            self._shared = {}
            workers, errors = [], []

            def body(block=block, thread=None, barrier=barrier):
                self._local.block, self._local.thread = block, thread
                self._local.barrier = barrier
                try:
                    run(*wrapped)
                except Exception as exc:  # pragma: no cover - shows in the assertion below
                    errors.append(exc)
                    barrier.abort()
            for thread in _ndindex(self.threads):
                workers.append(threading.Thread(target=body, kwargs={"thread": thread}))
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            assert not errors, errors

    # the parts of `cuda` the kernels above use
    @property
    def threadIdx(self):
        return _Dim(*self._local.thread)

    @property
    def blockIdx(self):
        return _Dim(*self._local.block)

    @property
    def blockDim(self):
        return _Dim(*self.threads)

    @property
    def gridDim(self):
        return _Dim(*self.blocks)

    def grid(self, ndim):
        i = [b * d + t for b, d, t in zip(self._local.block, self.threads, self._local.thread)]
        return i[0] if ndim == 1 else tuple(i[:ndim])

    def syncthreads(self):
        self._local.barrier.wait()

    def _shared_array(self, shape, dtype):
        frame = sys._getframe(1)
        site = frame.f_lineno
        name = re.match(r"\s*(\w+)", linecache.getline(frame.f_code.co_filename, site)).group(1)
        with self._lock:
            if site not in self._shared:
                self._shared[site] = Logged(self, "shared", name, np.zeros(shape, dtype))
        return self._shared[site]

    def note(self, space, name, flat, kind, line):
        self.log.append((self._local.block, self._local.thread, space, name, flat, kind, line))

    # what the tests compare
    def counts(self):
        out = collections.defaultdict(collections.Counter)
        for block, thread, space, _, _, kind, _ in self.log:
            out[(block, thread)][(space, kind)] += 1
        return out

    def requests(self, name, kind, itemsize=4):
        """Per warp request of (array, kind): the sorted byte addresses, like the recorder's
        grouping but from this log: the k-th access of a thread to (array, kind, line)."""
        seen, groups = collections.Counter(), collections.defaultdict(list)
        for block, thread, space, arr, flat, k_, line in self.log:
            if (arr, k_) != (name, kind):
                continue
            k = seen[(block, thread, line)]
            seen[(block, thread, line)] += 1
            linear = thread[0] + self.threads[0] * (thread[1] + self.threads[1] * thread[2])
            groups[(block, linear // 32, line, k)].append(flat * itemsize)
        return groups


class Logged:
    def __init__(self, run, space, name, data):
        self.run, self.space, self.name, self.data = run, space, name, data
        self.shape, self.size, self.dtype, self.ndim = data.shape, data.size, data.dtype, data.ndim

    def _log(self, key, kind, line):
        for flat in np.atleast_1d(np.arange(self.size).reshape(self.shape)[key]).ravel():
            self.run.note(self.space, self.name, int(flat), kind, line)

    def __getitem__(self, key):
        self._log(key, "read", sys._getframe(1).f_lineno)
        return self.data[key]

    def __setitem__(self, key, value):
        self._log(key, "write", sys._getframe(1).f_lineno)
        self.data[key] = value


class _Dim:
    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z


def _dim3(d):
    d = (d,) if isinstance(d, int) else tuple(d)
    return d + (1,) * (3 - len(d))


def _ndindex(dims):
    for z in range(dims[2]):
        for y in range(dims[1]):
            for x in range(dims[0]):
                yield (x, y, z)


def _matrices(n=16):
    rng = np.random.default_rng(0)
    return (rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32),
            np.zeros((n, n), np.float32))


def _sectors(addresses):
    return len({a // 32 for a in addresses})


def _ways(addresses):
    words = {a // 4 for a in addresses}
    return max(collections.Counter(w % 32 for w in words).values())


# ---- tests --------------------------------------------------------------------------------------
@cpu_only
@pytest.mark.parametrize("kernel, global_reads, shared_reads, shared_writes", [
    (naive_matmul, 2 * 16, 0, 0),            # a row of a and a column of b: 2K elements
    (tiled_matmul, 2 * 16 // T, 2 * 16, 2 * 16 // T),   # one element of each per tile
])
def test_matmul_counts_match_an_independent_run(kernel, global_reads, shared_reads,
                                                shared_writes):
    """Does every thread make the same global and shared reads and writes as the kernel's own
    Python code run without the simulator, and are those the textbook's numbers?"""
    a, b, c = _matrices()
    picture = access_picture(kernel, (2, 2), (8, 8), a, b, c)
    independent = IndependentRun(kernel, (2, 2), (8, 8), a, b, c)
    assert picture.recording.error is None
    assert np.allclose(picture.recording.outputs["c"], a @ b, rtol=1e-5)
    assert {k: dict(v) for k, v in picture.counts.items()} == \
        {k: dict(v) for k, v in independent.counts().items()}
    for counts in picture.counts.values():
        assert counts[("global", "read")] == global_reads
        assert counts[("global", "write")] == 1
        assert counts[("shared", "read")] == shared_reads
        assert counts[("shared", "write")] == shared_writes
    rows = picture.per_thread()
    assert len(rows) == 256 and {r["global reads"] for r in rows} == {global_reads}
    assert picture.global_bytes() == 256 * 4 * (global_reads + 1)


@cpu_only
def test_tiled_matmul_moves_a_tile_width_fewer_global_bytes():
    """Is the tiled kernel's global read traffic T times smaller, as the table shows?"""
    a, b, c = _matrices()
    naive = access_picture(naive_matmul, (2, 2), (8, 8), a, b, c)
    tiled = access_picture(tiled_matmul, (2, 2), (8, 8), a, b, c)
    assert naive.totals()[("global", "read")] == T * tiled.totals()[("global", "read")]
    assert tiled.totals()[("shared", "read")] == naive.totals()[("global", "read")]
    # the naive kernel's a[row, k]: a warp spans 4 rows of the 8 × 8 block, 64 bytes apart,
    # so 4 sectors for 4 distinct floats; b[k, col] is 8 consecutive floats: 1 sector
    line = next(n for n, text in naive.recording.source.items() if text.startswith("acc += a["))
    read_a = naive.instruction(line, "a", "read")
    read_b = naive.instruction(read_a.line, "b", "read")
    assert (read_a.worst_sectors, read_a.mean_sectors) == (4, 4.0)
    assert (read_b.worst_sectors, read_b.mean_sectors) == (1, 1.0)


@cpu_only
@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_strided_copy_sectors_per_warp(stride, sectors):
    """Does a warp reading every stride-th float touch min(32, 4·stride) sectors, as the
    independent log's addresses say, while its contiguous write touches 4?"""
    n = 64
    x = np.arange(n * stride, dtype=np.float32)
    out = np.zeros(n, np.float32)
    picture = access_picture(strided_copy, 2, 32, x, out, stride)
    assert np.array_equal(picture.recording.outputs["out"], x[::stride][:n])
    reads = [r for r in picture.requests if (r.array, r.kind) == ("x", "read")]
    writes = [r for r in picture.requests if (r.array, r.kind) == ("out", "write")]
    assert len(reads) == len(writes) == 2                     # 2 blocks of 1 warp
    assert [r.sectors for r in reads] == [sectors, sectors]
    assert [r.sectors for r in writes] == [4, 4]
    assert all(r.min_sectors == 4 and r.lanes == 32 for r in reads)
    independent = IndependentRun(strided_copy, 2, 32, x, out, stride)
    assert sorted(_sectors(v) for v in independent.requests("x", "read").values()) == \
        sorted(r.sectors for r in reads)


@cpu_only
def test_misaligned_copy_touches_one_more_sector():
    """x[i + 1] through a device function and a module constant: 33 floats' worth of sectors."""
    x = np.arange(65, dtype=np.float32)
    picture = access_picture(shifted_copy, 2, 32, x, np.zeros(64, np.float32))
    reads = [r for r in picture.requests if r.array == "x"]
    assert [r.sectors for r in reads] == [5, 5]
    assert np.array_equal(picture.recording.outputs["out"], x[1:])


@cpu_only
@pytest.mark.parametrize("width, column_ways", [(32, 32), (33, 1)])
def test_bank_conflicts_unpadded_and_padded_tile(width, column_ways):
    """Is a column read of a 32 × 32 float tile a 32-way conflict, and none once padded to 33?
    Row writes never conflict, nor does a broadcast of one word."""
    kernel = make_transpose_tile(width)
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    picture = access_picture(kernel, 1, 32, x, np.zeros((32, 32), np.float32))
    assert np.array_equal(picture.recording.outputs["out"], x.T)
    shared = [r for r in picture.requests if r.space == "shared"]
    by_kind = collections.defaultdict(list)
    for r in shared:
        by_kind[(r.kind, r.elements)].append(r.ways)
    assert by_kind[("write", 32)] == [1] * 32                   # rows: lane = column
    assert by_kind[("read", 32)] == [column_ways] * 32          # columns: lane = row
    assert by_kind[("read", 1)] == [1]                          # the corner, read by every lane
    independent = IndependentRun(kernel, 1, 32, x, np.zeros((32, 32), np.float32))
    column = [v for v in independent.requests("tile", "read").values() if len(set(v)) == 32]
    assert [_ways(v) for v in column] == [column_ways] * 32
    summary = [s for s in picture.instructions if (s.space, s.kind) == ("shared", "read")]
    assert max(s.worst_ways for s in summary) == column_ways


@cpu_only
def test_idle_threads_and_lanes_that_sit_out():
    """40 elements on 2 blocks of 32: threads 40–63 touch nothing, and block 1's warp runs each
    access with 8 of its 32 lanes."""
    x, y = np.ones(40, np.float32), np.arange(40, dtype=np.float32)
    picture = access_picture(saxpy, 2, 32, np.float32(2), x, y, np.zeros(40, np.float32))
    idle = sorted(picture.global_thread_id(b, t) for b, t in picture.idle_threads)
    assert idle == list(range(40, 64))
    partial = [r for r in picture.requests if r.lanes < r.lanes_in_warp]
    assert {(r.block, r.lanes) for r in partial} == {((1, 0, 0), 8)}
    assert all(s.partial == 1 and s.lanes_out == 24 for s in picture.instructions)
    assert np.allclose(picture.recording.outputs["out"], 2 * x + y)
    assert "24 of 64 threads touched no memory" in picture.text()


@cpu_only
def test_races_are_drawn_not_stopped():
    """A missing barrier and a plain cross-block counter are races; the launch still finishes
    and is drawn. The atomic counter, a global exchange across a barrier and the tiled matmul
    are race-free."""
    picture = access_picture(missing_barrier, 1, 64, np.arange(64, dtype=np.float32),
                             np.zeros(64, np.float32))
    assert picture.recording.error is None and picture.races
    assert {(r.space, r.array) for r in picture.races} == {("shared", "s")}
    assert "Race: shared-memory race on `s`[" in picture.text()
    # the stopped first run's threads left nothing in the full second run's record
    assert picture.totals()[("shared", "write")] == picture.totals()[("global", "write")] == 64
    plain = access_picture(count_plain, 2, 4, np.zeros(1, np.int64))
    assert plain.races and plain.races[0].space == "global"
    (b1, *_), (b2, *_) = plain.races[0].first, plain.races[0].second
    assert b1 != b2 or plain.races[0].first[1] != plain.races[0].second[1]
    atomic = access_picture(count_atomic, 2, 4, np.zeros(1, np.int64))
    assert not atomic.races and atomic.recording.outputs["out"][0] == 8
    assert atomic.totals()[("global", "atomic")] == 8
    assert not access_picture(tiled_matmul, (2, 2), (8, 8), *_matrices()).races
    exchange = access_picture(neighbour_after_barrier, 1, 8, np.zeros(8), np.zeros(8))
    assert not exchange.races
    assert list(exchange.recording.outputs["res"]) == [1, 2, 3, 4, 5, 6, 7, 0]


@cpu_only
def test_a_kernel_that_fails_is_shown_with_its_error():
    picture = access_picture(strided_copy, 2, 32, np.arange(40, dtype=np.float32),
                             np.zeros(64, np.float32), 1)
    assert "IndexError" in picture.recording.error
    assert "stopped with IndexError" in picture.text()


def test_separate_process_records_the_same():
    """The path a GPU notebook takes: source and values sent to a fresh CPU-mode process, with a
    device function and a module constant; same counts, same lines, same results."""
    x = np.arange(65, dtype=np.float32)
    there = record_accesses(shifted_copy, 2, 32, x, np.zeros(64, np.float32), isolate=True)
    assert there.isolated and there.error is None
    assert np.array_equal(there.outputs["out"], x[1:])
    key = lambda a: (a.block, a.thread, a.array, a.element, a.kind, a.line)  # noqa: E731
    line = next(n for n, text in there.source.items() if text == "out[i] = x[shifted(i)]")
    expected = {((i // 32, 0, 0), (i % 32, 0, 0), name, (e,), kind, line)
                for i in range(64) for name, e, kind in (("x", i + 1, "read"), ("out", i, "write"))}
    assert sorted(map(key, there.accesses)) == sorted(expected)
    if ag.backend.name == "cpu":
        here = record_accesses(shifted_copy, 2, 32, x, np.zeros(64, np.float32))
        assert not here.isolated
        assert sorted(map(key, there.accesses)) == sorted(map(key, here.accesses))


def test_separate_process_names_what_cannot_travel():
    lock = threading.Lock()

    @cuda.jit
    def uses_a_lock(out):
        if lock is None:
            out[0] = 1

    with pytest.raises(AccessPictureError, match=r"`uses_a_lock` refers to `lock` \(a lock\)"):
        access_picture(uses_a_lock, 1, 1, np.zeros(1), isolate=True)


@cpu_only
def test_too_large_a_launch_is_refused():
    with pytest.raises(AccessPictureError, match="under 4,096 threads"):
        access_picture(saxpy, 100, 64, np.float32(1), *[np.zeros(6400, np.float32)] * 3)


@cpu_only
def test_displays_as_html_with_the_contract_classes_and_as_text():
    picture = access_picture(saxpy, 1, 32, np.float32(2), *[np.ones(20, np.float32)] * 3)
    bundle = picture._repr_mimebundle_()
    assert bundle["text/html"].startswith("<div class='aag-visual aag-visual-access-picture'>")
    assert "data:image/png;base64," in bundle["text/html"]
    assert "out[i] = a * x[i] + y[i]" in bundle["text/html"]
    assert "12 of 32 threads touched no memory" in bundle["text/plain"]
    assert "0–19" in bundle["text/plain"] and "20–31" in bundle["text/plain"]
    assert ag.visual.access_picture is access_picture


def test_kernel_source_travels_with_its_decorator_stripped_and_lines_kept():
    bundle = access._portable(shifted_copy)
    names = [f["name"] for f in bundle["functions"]]
    assert names == ["shifted_copy", "shifted"]
    assert bundle["functions"][0]["calls"] == {"shifted": 1}
    assert bundle["functions"][1]["values"] == {"OFFSET": 1}
    assert bundle["functions"][0]["modules"] == {"cuda": "numba.cuda"}
    assert bundle["functions"][1]["device"] and not bundle["functions"][0]["device"]
