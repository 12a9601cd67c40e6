"""Chapter 15's graphs and kernels of the course: the graph generators (an R-MAT graph as the
Graph500 specification makes them, a 2-D grid like a road network), the CSR form and its
transpose, a breadth-first search on the host (the checks' spec, and the CPU baselines), the
course's BFS kernels (vertex-centric push, vertex-centric pull, a frontier queue) and the host
loops that launch a BFS one level per launch.

Vertices are numbered 0 .. n − 1; a graph is ``row_ptr`` (int32, n + 1 entries) and ``col``
(int32, one entry per edge): the out-neighbours of ``v`` are ``col[row_ptr[v] : row_ptr[v + 1]]``.
The edge-centric BFS takes the same edges as a list (COO): ``src`` and ``dst``, edge ``e`` going
from ``src[e]`` to ``dst[e]``. Levels are int32, −1 for a vertex the source does not reach."""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from autograder.machine import device
from autograder.problems.kit.kernels import KernelCache

cuda = int32 = None    # module globals, bound by KernelCache on first use (the simulator)
_kernels = KernelCache(globals(), "cuda", "int32")

INDEX = np.int32
UNVISITED = -1
RMAT_ABC = (0.57, 0.19, 0.19)          # Graph500's initiator probabilities (d = 0.05)
SENTINEL = np.iinfo(np.int32).max      # a frontier slot no thread wrote (checks)
CHECK_FRONTIERS_UP_TO = 1 << 16
BLOCK_QUEUE = 128                      # the course's block queue (vertices)
MIN_BLOCK_QUEUE = 64                   # the least a privatized queue is assumed to hold (checks)


def _cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


# ---- graphs -------------------------------------------------------------------------------------

def rmat_edges(rng: np.random.Generator, scale: int, edges: int, abc=RMAT_ABC):
    """``edges`` directed edges of an R-MAT (Kronecker) graph on 2^scale vertices, as Graph500's
    generator makes them: each edge picks, bit by bit from the top, one quadrant of the adjacency
    matrix with probabilities a, b, c, d; then the vertex numbers are shuffled, so that the
    high-degree vertices are not all near 0. Returns (src, dst), int64."""
    a, b, c = abc
    ab = a + b
    c_norm, a_norm = c / (1.0 - ab), a / ab
    src = np.zeros(edges, np.int64)
    dst = np.zeros(edges, np.int64)
    for bit in range(scale):
        down = rng.random(edges, dtype=np.float32) > ab          # the source's bit
        right = rng.random(edges, dtype=np.float32) > np.where(down, c_norm, a_norm)
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(1 << scale)
    return perm[src], perm[dst]


def grid_edges(rng: np.random.Generator, n: int, keep: float = 0.9):
    """A road-like graph: n vertices on a grid of ``ceil(sqrt(n))`` columns (the last row
    partial), each joined to its left, right, upper and lower neighbours in both directions;
    each street (both directions) is kept with probability ``keep``. High diameter: about
    twice the side."""
    w = max(1, int(np.ceil(np.sqrt(n))))
    v = np.arange(n, dtype=np.int64)
    right = v[(v % w != w - 1) & (v + 1 < n)]
    down = v[v + w < n]
    a = np.concatenate([right, down])
    b = np.concatenate([right + 1, down + w])
    kept = rng.random(a.size) < keep
    a, b = a[kept], b[kept]
    return np.concatenate([a, b]), np.concatenate([b, a])


def to_csr(n: int, src, dst):
    """(row_ptr, col) of the directed edges src → dst, each vertex's neighbours in increasing
    order (duplicates kept)."""
    src = np.asarray(src, np.int64)
    key = src * max(1, n) + np.asarray(dst, np.int64)
    key.sort()                             # by source, then destination (one int64 sort)
    counts = np.bincount(src, minlength=n)
    row_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=row_ptr[1:])
    # The destination is what the key holds above its source: no 64-bit division over the edges.
    key -= np.repeat(np.arange(n, dtype=np.int64) * max(1, n), counts)
    return row_ptr.astype(INDEX), key.astype(INDEX)


def edge_list(row_ptr, col):
    """The edges of a CSR graph as a list (COO): (src, dst), int32, in CSR order."""
    n = len(row_ptr) - 1
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(np.asarray(row_ptr, np.int64)))
    return src.astype(INDEX), np.asarray(col).astype(INDEX)


def transpose(row_ptr, col):
    """The CSR of the reversed graph (in-neighbours): (in_ptr, in_col)."""
    n = len(row_ptr) - 1
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(np.asarray(row_ptr, np.int64)))
    return to_csr(n, np.asarray(col, np.int64), src)


def rmat_graph(rng: np.random.Generator, n: int, edge_factor: int = 8):
    """An R-MAT graph on n vertices (any n: made at the next power of two, vertex numbers taken
    modulo n) with ``edge_factor · n`` directed edges: (row_ptr, col)."""
    n = int(n)
    scale = max(1, int(n - 1).bit_length())
    src, dst = rmat_edges(rng, scale, edge_factor * n)
    if n != 1 << scale:
        src, dst = src % n, dst % n
    return to_csr(n, src, dst)


def out_degrees(row_ptr) -> np.ndarray:
    return np.diff(np.asarray(row_ptr, np.int64))


def hub_source(rng: np.random.Generator, row_ptr) -> int:
    """A source that reaches much of an R-MAT graph: one of its 8 vertices of highest
    out-degree, drawn at random."""
    deg = out_degrees(row_ptr)
    top = np.argsort(-deg, kind="stable")[:8]
    return int(rng.choice(top))


# ---- BFS on the host ------------------------------------------------------------------------------

def neighbours_of(row_ptr, col, frontier) -> np.ndarray:
    """Every out-neighbour of the vertices of ``frontier`` (with repeats), vectorised."""
    row_ptr = np.asarray(row_ptr)
    starts = row_ptr[frontier].astype(np.int64)
    ends = row_ptr[np.asarray(frontier) + 1].astype(np.int64)
    counts = ends - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    first = np.repeat(starts - np.cumsum(counts) + counts, counts)
    return np.asarray(col)[first + np.arange(total)].astype(np.int64)


def bfs_levels(row_ptr, col, source: int) -> np.ndarray:
    """The BFS level of every vertex from ``source`` (−1 where unreachable), level by level with
    NumPy: the frontier's neighbours that have no level yet get the next one. int64."""
    n = len(row_ptr) - 1
    levels = np.full(n, UNVISITED, np.int64)
    levels[source] = 0
    frontier = np.array([source], np.int64)
    level = 0
    while frontier.size:
        nbrs = neighbours_of(row_ptr, col, frontier)
        nbrs = np.unique(nbrs[levels[nbrs] == UNVISITED])
        levels[nbrs] = level + 1
        frontier = nbrs
        level += 1
    return levels


def bfs_levels_queue(row_ptr, col, source: int) -> np.ndarray:
    """The same levels, the textbook way: one FIFO queue, one vertex at a time (plain Python,
    for small graphs: the checks compare the two)."""
    from collections import deque
    n = len(row_ptr) - 1
    levels = [UNVISITED] * n
    levels[source] = 0
    queue = deque([source])
    while queue:
        v = queue.popleft()
        for e in range(int(row_ptr[v]), int(row_ptr[v + 1])):
            u = int(col[e])
            if levels[u] == UNVISITED:
                levels[u] = levels[v] + 1
                queue.append(u)
    return np.array(levels, np.int64)


def work_per_level(row_ptr, col, source: int) -> list[dict]:
    """What each level of a BFS costs each way, counted on the host: the frontier's size, the
    edges a **push** step examines (every out-edge of the frontier), and the edges a **pull**
    step examines (every unvisited vertex scans its in-edges until it finds a parent in the
    frontier, and all of them if it finds none)."""
    levels = bfs_levels(row_ptr, col, source)
    in_ptr, in_col = transpose(row_ptr, col)
    in_ptr = np.asarray(in_ptr, np.int64)
    in_deg = np.diff(in_ptr)
    deg = out_degrees(row_ptr)
    n = levels.size
    segment = np.repeat(np.arange(n), in_deg)               # the vertex of each in-edge
    position = np.arange(in_col.size) - in_ptr[segment]     # its place in the vertex's list
    nonempty = np.flatnonzero(in_deg)
    rows = []
    for level in range(int(levels.max()) + 1 if n else 0):
        frontier = np.flatnonzero(levels == level)
        unvisited = (levels == UNVISITED) | (levels > level)
        # edges a vertex examines: up to its first parent at this level, or all of them
        examined = np.where(levels[in_col] == level, position + 1, in_deg[segment])
        per_vertex = np.zeros(n, np.int64)
        if nonempty.size:
            per_vertex[nonempty] = np.minimum.reduceat(examined, in_ptr[nonempty])
        rows.append({"level": level, "frontier": int(frontier.size),
                     "push_edges": int(deg[frontier].sum()),
                     "pull_edges": int(per_vertex[unvisited].sum()),
                     "unvisited": int(unvisited.sum())})
    return rows


# ---- the course's kernels ------------------------------------------------------------------------

@_kernels.lazy
def _bfs_kernels() -> dict:
    """Compile the course's BFS kernels once for this backend."""
    UNV = UNVISITED

    @cuda.jit
    def push_reference(row_ptr, col, levels, level, changed):
        # One thread per vertex; the vertices of this level label their unvisited
        # out-neighbours. Several threads may store the same level + 1 in one vertex: benign.
        v = cuda.grid(1)
        if v < levels.size and levels[v] == level:
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if levels[u] == UNV:
                    levels[u] = level + 1
                    changed[0] = 1

    @cuda.jit
    def pull_reference(in_ptr, in_col, levels, level, changed):
        # One thread per vertex; an unvisited vertex looks for a parent in this level among
        # its in-neighbours and stops at the first.
        v = cuda.grid(1)
        if v < levels.size and levels[v] == UNV:
            for e in range(in_ptr[v], in_ptr[v + 1]):
                if levels[in_col[e]] == level:
                    levels[v] = level + 1
                    changed[0] = 1
                    break

    @cuda.jit
    def frontier_reference(row_ptr, col, levels, frontier, next_frontier, next_size, level):
        # One thread per frontier vertex. A neighbour is claimed by the one thread whose
        # compare-and-swap finds it unvisited; that thread takes a slot of the next frontier.
        i = cuda.grid(1)
        if i < frontier.size:
            v = frontier[i]
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if cuda.atomic.cas(levels, u, UNV, level + 1) == UNV:
                    slot = cuda.atomic.add(next_size, 0, 1)
                    next_frontier[slot] = u

    @cuda.jit
    def edge_reference(src, dst, levels, level, changed):
        # One thread per edge: an edge from a vertex of this level to an unvisited vertex labels
        # it. Several edges may store the same level + 1 in one vertex: benign, as in push.
        e = cuda.grid(1)
        if e < src.size and levels[src[e]] == level:
            u = dst[e]
            if levels[u] == UNV:
                levels[u] = level + 1
                changed[0] = 1

    @cuda.jit
    def private_reference(row_ptr, col, levels, frontier, next_frontier, next_size, level):
        # The frontier kernel with a queue per block in shared memory: appends take a slot of
        # the block's queue (a shared atomic); a full block queue sends the vertex straight to
        # the global one. Then one global atomic reserves room for the whole block, and the
        # block's threads copy its queue there.
        b_queue = cuda.shared.array(BLOCK_QUEUE, int32)
        b_count = cuda.shared.array(1, int32)
        b_start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        if t == 0:
            b_count[0] = 0
        cuda.syncthreads()
        i = cuda.grid(1)
        if i < frontier.size:
            v = frontier[i]
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if cuda.atomic.cas(levels, u, UNV, level + 1) == UNV:
                    k = cuda.atomic.add(b_count, 0, 1)
                    if k < BLOCK_QUEUE:
                        b_queue[k] = u
                    else:                                   # the block's queue is full
                        next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
        cuda.syncthreads()
        if t == 0:
            b_count[0] = min(b_count[0], BLOCK_QUEUE)
            b_start[0] = cuda.atomic.add(next_size, 0, b_count[0])
        cuda.syncthreads()
        for k in range(t, b_count[0], cuda.blockDim.x):
            next_frontier[b_start[0] + k] = b_queue[k]

    return dict(push=push_reference, pull=pull_reference, frontier=frontier_reference,
                edge=edge_reference, private=private_reference)


def reference_push():
    return _bfs_kernels()["push"]


def reference_pull():
    return _bfs_kernels()["pull"]


def reference_frontier():
    return _bfs_kernels()["frontier"]


def reference_edge():
    return _bfs_kernels()["edge"]


def reference_private():
    return _bfs_kernels()["private"]


@_kernels.lazy
def _init_levels():
    from autograder.grading import provenance

    @cuda.jit
    def init_levels(levels, source):
        for v in range(cuda.grid(1), levels.size, cuda.gridsize(1)):
            levels[v] = -1 if v != source else 0
    return provenance.course_helper(init_levels)      # prepares; computes no answer


# ---- the host loops: one launch per level ----------------------------------------------------------

class FrontierError(RuntimeError):
    """The frontier a launch built is not the set of vertices it labelled."""


# checking: a correctness check runs (not a timed call); private: its exercise asks for a
# privatized frontier
_state = {"checking": False, "private": False}


@contextlib.contextmanager
def checking():
    """Inside: a correctness check runs (the frontier loop checks every frontier it builds, and
    in CPU mode race-checks the frontier's size); outside: a timed call, nothing extra."""
    _state["checking"] = True
    try:
        yield
    finally:
        _state["checking"] = False


def start_levels(levels, source: int) -> None:
    """Every level −1 but the source's, 0: set by the course before the first launch (a copy in
    CPU mode, a small kernel on a GPU)."""
    n = levels.shape[0]
    if isinstance(levels, np.ndarray):              # a host array the race detector watches
        np.asarray(levels)[...] = UNVISITED
        np.asarray(levels)[source] = 0
        from autograder.grading import provenance
        provenance.course_set_up(levels)            # set by the course, not by the learner
        return
    if not device.current().is_gpu:
        init = np.full(n, UNVISITED, INDEX)
        init[source] = 0
        levels.copy_to_device(init)
        return
    _init_levels()[max(1, min(1024, _cdiv(n, 256))), 256](levels, int(source))


def _flag():
    from numba import cuda as numba_cuda
    return numba_cuda.to_device(np.zeros(1, INDEX))


def _level_loop(kernel, a, b, levels, source: int, threads: int, items: int) -> int:
    n = levels.shape[0]
    start_levels(levels, source)
    changed = _flag()
    zero = np.zeros(1, INDEX)
    blocks = max(1, _cdiv(items, threads))
    launches = 0
    for level in range(max(1, n)):      # a BFS has at most n − 1 levels past the source's
        changed.copy_to_device(zero)
        kernel[blocks, threads](a, b, levels, level, changed)
        launches += 1
        if int(changed.copy_to_host()[0]) == 0:
            break
    return launches


def bfs_by_levels(kernel, graph_ptr, graph_col, levels, source: int, threads: int = 256) -> int:
    """A vertex-centric BFS (push or pull: the kernel decides which arrays ``graph_ptr`` and
    ``graph_col`` are): levels set to −1 and the source's to 0, then for level = 0, 1, 2, …:
    ``changed`` set to 0, one launch of ``ceil(n / threads)`` blocks of ``threads``,
    ``kernel[blocks, threads](graph_ptr, graph_col, levels, level, changed)``, and stop when the
    launch labelled nothing (``changed[0]`` still 0). Returns the number of launches."""
    return _level_loop(kernel, graph_ptr, graph_col, levels, source, threads, levels.shape[0])


def bfs_by_edges(kernel, src, dst, levels, source: int, threads: int = 256) -> int:
    """An edge-centric BFS: the same loop as :func:`bfs_by_levels`, one thread per edge: each
    level is one launch of ``ceil(m / threads)`` blocks (m = ``src.size`` edges, at least one
    block), ``kernel[blocks, threads](src, dst, levels, level, changed)``. Returns the number of
    launches."""
    return _level_loop(kernel, src, dst, levels, source, threads, int(src.shape[0]))


FRONTIER_ADVICE = (
    "several frontier vertices can reach the same unvisited neighbour in one launch. Claim it "
    "with `cuda.atomic.cas(levels, u, -1, level + 1)` and add it to the next frontier only if "
    "the cas returned -1 (this thread was first); a plain check then store lets two threads "
    "both see -1 and add the vertex twice")
TAIL_ADVICE = (
    "every thread that adds a vertex must take its own slot: `slot = cuda.atomic.add(next_size, "
    "0, 1)` returns the old size, which is the slot; a plain `next_size[0] += 1` is a read then a "
    "write, and two threads can take the same slot")
# levels: a plain read of a vertex's level beside another thread's atomic is fine (whatever it
# reads, the cas decides); a plain store is not.
LEVEL_CLASHES = {"write": ("write", "read", "atomic"), "read": ("write",), "atomic": ("write",)}


def watch_levels(levels) -> None:
    """CPU mode, a tracked output: race-check the levels with :data:`LEVEL_CLASHES`."""
    tracker = getattr(type(levels), "_tracker", None)
    if tracker is not None:
        tracker.clashes = LEVEL_CLASHES
        tracker.advice = FRONTIER_ADVICE
        tracker.what = "the levels"


def _tail():
    """The next frontier's size, 0: race-checked in CPU mode during a check."""
    if _state["checking"] and not device.current().is_gpu:
        from autograder.machine.simulator import races
        return races.track_outputs({"next_size": np.zeros(1, INDEX)}, advice=TAIL_ADVICE,
                                   what="the frontier's size")["next_size"]
    return _flag()


def _read_size(tail) -> int:
    if isinstance(tail, np.ndarray):
        return int(np.asarray(tail)[0])
    return int(tail.copy_to_host()[0])


def _check_frontier(levels, frontier, size: int, level: int) -> None:
    """Checks only: is the new frontier exactly the vertices this launch labelled, once each?"""
    got = np.sort(_host(frontier, size).astype(np.int64))
    lv = np.asarray(levels) if isinstance(levels, np.ndarray) else levels.copy_to_host()
    want = np.flatnonzero(lv == level + 1)
    if np.array_equal(got, want):
        return
    unwritten = int((got == SENTINEL).sum())
    if unwritten:
        raise FrontierError(
            f"after the launch of level {level}, the next frontier's size is {size} but "
            f"{unwritten} of its first {size} slots were never written: every thread that takes "
            "a slot (the value cuda.atomic.add returned) writes its vertex there")
    if got.size and np.any(got[1:] == got[:-1]):
        twice = int(got[1:][got[1:] == got[:-1]][0])
        raise FrontierError(
            f"after the launch of level {level}, vertex {twice} is in the next frontier more "
            "than once: only the thread whose cuda.atomic.cas found it unvisited (returned -1) "
            "may add it")
    missing = np.setdiff1d(want, got)
    if missing.size:
        raise FrontierError(
            f"after the launch of level {level}, vertex {int(missing[0])} has level {level + 1} "
            "but is not in the next frontier: every vertex a thread labels must be added to it "
            f"({missing.size} missing)")
    extra = np.setdiff1d(got, want)
    raise FrontierError(
        f"after the launch of level {level}, the next frontier holds vertex {int(extra[0])}, "
        f"whose level is not {level + 1}: add a vertex only when this thread set its level "
        "(from -1 to level + 1)")


class NotPrivatized(RuntimeError):
    """CPU mode, the privatized frontier's checks: a block appended its vertices through the
    global tail one by one instead of reserving room for all of them at once."""


@contextlib.contextmanager
def privatized():
    """Inside (with :func:`checking`, in CPU mode): the frontier loop watches who updates
    ``next_size`` and who fills which slot of the next frontier, launch by launch, and raises
    :class:`NotPrivatized` when a block made more updates of ``next_size`` than a block queue in
    shared memory needs (:func:`check_privatized`)."""
    _state["private"] = True
    try:
        yield
    finally:
        _state["private"] = False


class _Watched:
    """Mixed into an array's class: every store by a simulated thread is logged as (role, index,
    block). The log lives on the class, because the simulator copies a kernel's array arguments
    into new arrays of the same type."""

    _aag_watch: tuple | None = None

    def __setitem__(self, key, value):
        watch = type(self)._aag_watch
        block = getattr(threading.current_thread(), "blockIdx", None)
        if watch is not None and block is not None:
            watch[0].append((watch[1], key, tuple(block)))     # list.append: atomic under the GIL
        super().__setitem__(key, value)


def _watched(array: np.ndarray, log: list, role: str) -> np.ndarray:
    cls = type(f"Watched_{role}", (_Watched, type(array)), {"_aag_watch": (log, role)})
    return array.view(cls)


def _slot(key) -> int | None:
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    try:
        return int(np.asarray(key).item()) if np.ndim(key) == 0 else None
    except (TypeError, ValueError):
        return None


def check_privatized(log: list, size: int, level: int) -> None:
    """Raise :class:`NotPrivatized` unless every block of the launch that built a frontier of
    ``size`` vertices updated ``next_size`` at most once, plus once per vertex past the first
    :data:`MIN_BLOCK_QUEUE` it appended (a full block queue sends the rest one by one). A block's
    appended vertices are the slots below ``size`` whose last store was its own."""
    tail: dict = {}
    last: dict = {}
    for role, key, block in log:
        if role == "tail":
            tail[block] = tail.get(block, 0) + 1
        else:
            slot = _slot(key)
            if slot is not None:
                last[slot] = block
    appended: dict = {}
    for slot, block in last.items():
        if 0 <= slot < size:
            appended[block] = appended.get(block, 0) + 1
    for block in sorted(tail):
        count, mine = tail[block], appended.get(block, 0)
        allowed = 1 + max(0, mine - MIN_BLOCK_QUEUE)
        if count > allowed:
            which = str(block[0]) if not any(block[1:]) else ", ".join(map(str, block))
            each = " (one per vertex)" if count >= mine else ""
            raise NotPrivatized(
                "this exercise asks for a privatized frontier, and this kernel is not: in the "
                f"launch for level {level}, block {which} appended {mine} "
                f"vertices with {count} atomic updates of next_size{each}; a block queue in "
                f"shared memory needs at most {allowed} (one to reserve the block's room, plus "
                f"one per vertex past the first {MIN_BLOCK_QUEUE} if the queue overflows)")


_kept: dict = {}       # GPU: the two queues of the latest capacity, kept between calls


def _queues(cap: int, checking: bool, log: list | None = None):
    """Two int32 queues of ``cap`` slots: filled with SENTINEL for a check; on a GPU, for a
    timed call, the same two arrays every time (allocating 2 × 268 MB per call would be timed).
    With a ``log`` (CPU mode, privatization checked): host arrays whose stores are logged."""
    from numba import cuda as numba_cuda
    if log is not None:
        return (_watched(np.full(cap, SENTINEL, INDEX), log, "slot"),
                _watched(np.full(cap, SENTINEL, INDEX), log, "slot"))
    if checking or not device.current().is_gpu:
        return (numba_cuda.to_device(np.full(cap, SENTINEL, INDEX)),
                numba_cuda.to_device(np.full(cap, SENTINEL, INDEX)))
    if _kept.get("cap") != cap:
        _kept.clear()
        _kept.update(cap=cap, queues=(numba_cuda.device_array(cap, INDEX),
                                      numba_cuda.device_array(cap, INDEX)))
    return _kept["queues"]


def _put(queue, values) -> None:
    """Copy ``values`` into the start of a queue (a device array, or a host array in CPU mode)."""
    values = np.asarray(values, INDEX)
    if isinstance(queue, np.ndarray):
        np.copyto(np.asarray(queue)[:values.size], values)
    else:
        queue[:values.size].copy_to_device(values)


def _host(queue, size: int) -> np.ndarray:
    if isinstance(queue, np.ndarray):
        return np.array(np.asarray(queue)[:size])
    return queue[:size].copy_to_host() if size else np.zeros(0, INDEX)


def bfs_frontier(kernel, row_ptr, col, levels, source: int, threads: int = 256) -> int:
    """A BFS with a frontier queue: levels set to −1 and the source's to 0, the frontier
    ``[source]``; then for level = 0, 1, 2, … while the frontier is not empty: ``next_size`` set
    to 0, one launch of ``ceil(size / threads)`` blocks,
    ``kernel[blocks, threads](row_ptr, col, levels, frontier, next_frontier, next_size, level)``
    with ``frontier`` exactly the current frontier's vertices (``frontier.size`` of them) and
    ``next_frontier`` room for every edge; then the two swap. Returns the number of launches."""
    n = levels.shape[0]
    m = int(col.shape[0])
    start_levels(levels, source)
    watch_levels(levels)
    # Checks build and compare every frontier on the host: on graphs of up to 2^16 vertices (CPU
    # mode's, and a GPU's small cases); larger ones are checked by their levels alone.
    checking = _state["checking"] and n <= CHECK_FRONTIERS_UP_TO
    log = [] if checking and _state["private"] and not device.current().is_gpu else None
    cap = max(1, m)
    current, nxt = _queues(cap, checking, log)
    _put(current, [source])
    size, level, launches = 1, 0, 0
    fill = np.full(cap, SENTINEL, INDEX) if checking else None
    while size > 0 and level < max(1, n):
        tail = _tail()
        if log is not None:
            tail = _watched(tail, log, "tail")
            log.clear()
        if checking:
            _put(nxt, fill)
        kernel[_cdiv(size, threads), threads](row_ptr, col, levels, current[:size], nxt, tail,
                                              level)
        launches += 1
        size = _read_size(tail)
        if size > cap or size < 0:
            raise FrontierError(
                f"after the launch of level {level}, next_size is {size}, more than the graph's "
                f"{m} edges: a vertex was added more than once (or the size counted wrong)")
        if checking:
            _check_frontier(levels, nxt, size, level)
        if log is not None:
            check_privatized(log, size, level)
        current, nxt = nxt, current
        level += 1
    return launches


def reference_bfs_push(row_ptr, col, levels, source, threads=256):
    return bfs_by_levels(reference_push(), row_ptr, col, levels, source, threads)


def reference_bfs_frontier(row_ptr, col, levels, source, threads=256):
    return bfs_frontier(reference_frontier(), row_ptr, col, levels, source, threads)


def reference_bfs_edges(src, dst, levels, source, threads=256):
    return bfs_by_edges(reference_edge(), src, dst, levels, source, threads)
