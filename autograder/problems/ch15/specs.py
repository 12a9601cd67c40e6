"""Chapter 15's graded exercises (15.1 - 15.5: push, pull, edge-centric, frontier queue,
privatized frontier): the graphs a check makes, BFS levels on the host as
the spec, how the checks launch a learner's kernel (the course's loop, one launch per level), the
CPU baselines, the verdicts that say what a wrong BFS usually means, and the :class:`Problem`
objects."""

from __future__ import annotations

import functools

import numpy as np

from autograder.core.checks import Verdict
from autograder.grading.problem import Baseline, Problem, SpeedBar, Sizes
from autograder.problems.ch15 import references as refs
from autograder.problems.ch15.references import (INDEX, MIN_BLOCK_QUEUE, UNVISITED,
                                                 bfs_by_edges, bfs_by_levels, bfs_frontier,
                                                 bfs_levels, edge_list, grid_edges, hub_source,
                                                 neighbours_of, rmat_graph, to_csr,
                                                 transpose)
from autograder.problems.kit import njit_on_first_call

EDGE_FACTOR = 8           # edges per vertex of the checks' R-MAT graphs
SPEED_SCALE = 22
SPEED_SIZE = 1 << SPEED_SCALE     # 4,194,304 vertices, 16 edges each: 67 million edges
SPEED_EDGE_FACTOR = 16

KINDS = ("rmat", "grid", "messy", "sink")
KIND_LABELS = {"rmat": "R-MAT graph", "grid": "2-D grid, some streets missing",
               "messy": "R-MAT with self-loops and duplicate edges",
               "sink": "R-MAT, every out-neighbour of the source a dead end",
               "star": "a star: the source's one thread appends every other vertex in one "
                       "launch, more than a block queue holds"}
STAR_SIZES = (150, 601, 2001)   # the privatized frontier's stars (CPU visible and hidden; GPU)


def kind_of(n: int) -> str:
    """The graph a case of n vertices gets: fixed by the size, so a verdict can name it."""
    if int(n) in STAR_SIZES:
        return "star"
    return KINDS[int(n) % len(KINDS)]


def _label(n) -> str:
    return f"n = {int(n)} vertices ({KIND_LABELS[kind_of(n)]})"


def _edge_label(n) -> str:
    return f"n = {int(n)} vertices, as an edge list ({KIND_LABELS[kind_of(n)]})"


# ---- the graphs of the checks ---------------------------------------------------------------------

def check_graph(rng: np.random.Generator, n: int, kind: str | None = None):
    """(row_ptr, col, source) of a case's graph: an R-MAT graph from one of its hubs; a grid from
    its corner; an R-MAT graph with a self-loop on every 8th vertex and a tenth of its edges
    doubled; an R-MAT graph whose source's out-neighbours have had their out-edges taken away (the
    search stops after one level, most vertices unreachable)."""
    n = int(n)
    kind = kind or kind_of(n)
    if kind == "star":
        # The source (a vertex drawn at random) joined to every vertex, over a sparse R-MAT
        # graph whose edges all lead to vertices the star labels first.
        row_ptr, col = rmat_graph(rng, n, 2)
        source = int(rng.integers(n))
        src = np.repeat(np.arange(n, dtype=np.int64), np.diff(row_ptr.astype(np.int64)))
        everyone = np.arange(n, dtype=np.int64)
        return reaching_graph(n, np.concatenate([src, np.full(n, source)]),
                              np.concatenate([col.astype(np.int64), everyone]), source)
    if kind == "grid":
        src, dst = grid_edges(rng, n)
        return reaching_graph(n, src, dst, 0)
    row_ptr, col = rmat_graph(rng, n, EDGE_FACTOR)
    source = hub_source(rng, row_ptr)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(row_ptr.astype(np.int64)))
    dst = col.astype(np.int64)
    if kind == "messy":
        loops = np.arange(0, n, 8, dtype=np.int64)
        doubled = rng.choice(src.size, size=src.size // 10, replace=False) if src.size else []
        src = np.concatenate([src, loops, src[doubled]])
        dst = np.concatenate([dst, loops, dst[doubled]])
    elif kind == "sink":
        ends = np.setdiff1d(dst[src == source], [source])
        keep = ~np.isin(src, ends)
        src, dst = src[keep], dst[keep]
    return reaching_graph(n, src, dst, source)


def reaching_graph(n: int, src, dst, source: int):
    """(row_ptr, col, source), with one more edge source → source + 1 where the search would
    reach nothing past the source (a grid whose corner lost both streets, a tiny R-MAT graph):
    the judge fails a call whose kernel stored nothing, so every case labels a vertex."""
    row_ptr, col = to_csr(n, src, dst)
    # The search reaches nothing past the source exactly when no out-edge leaves it.
    if n > 1 and not np.any(col[row_ptr[source]:row_ptr[source + 1]] != source):
        row_ptr, col = to_csr(n, np.append(src, source), np.append(dst, (source + 1) % n))
    return row_ptr, col, source


def _graph_inputs(rng, n):
    row_ptr, col, source = check_graph(rng, n)
    return {"row_ptr": row_ptr, "col": col, "source": int(source)}


def _pull_inputs(rng, n):
    row_ptr, col, source = check_graph(rng, n)
    in_ptr, in_col = transpose(row_ptr, col)
    return {"in_ptr": in_ptr, "in_col": in_col, "source": int(source)}


def _edge_inputs(rng, n):
    """The case's graph as an edge list (COO), with one to three of its edges doubled (so that
    the edge count is rarely a multiple of the block size: an R-MAT graph has 8 per vertex), in
    a random order."""
    row_ptr, col, source = check_graph(rng, n)
    src, dst = edge_list(row_ptr, col)
    if src.size:
        again = rng.integers(src.size, size=int(rng.integers(1, 4)))
        src, dst = np.concatenate([src, src[again]]), np.concatenate([dst, dst[again]])
    order = rng.permutation(src.size)
    return {"src": src[order], "dst": dst[order], "source": int(source), "n": int(n)}


def _levels_spec(row_ptr, col, source, blocks=0, threads=0):
    return {"levels": bfs_levels(row_ptr, col, int(source)).astype(np.float64)}


def _pull_spec(in_ptr, in_col, source, blocks=0, threads=0):
    row_ptr, col = transpose(in_ptr, in_col)         # the transpose of the transpose
    return _levels_spec(row_ptr, col, source)


def _edge_spec(src, dst, source, n, blocks=0, threads=0):
    row_ptr, col = to_csr(int(n), src, dst)
    return _levels_spec(row_ptr, col, source)


def _levels_outputs(n):
    return {"levels": ((int(n),), INDEX)}


def _exact(inputs, expected):
    return {name: np.zeros_like(v) for name, v in expected.items()}


def _reached_reads(row_ptr, col, source):
    """The graph elements every BFS reads: each reached vertex's row_ptr entry and its edges."""
    levels = bfs_levels(row_ptr, col, int(source))
    reached = levels >= 0
    row = np.zeros(len(row_ptr), np.bool_)
    row[:-1] = reached
    deg = np.diff(np.asarray(row_ptr, np.int64))
    edges = np.repeat(reached, deg)                   # an edge is read if its source is reached
    return row, edges


def _push_must_read(case):
    row, edges = _reached_reads(case.inputs["row_ptr"], case.inputs["col"],
                                case.inputs["source"])
    return {"row_ptr": row, "col": edges}


def _edge_must_read(case):
    # Whichever end a thread looks at first: an edge whose src is reached has its dst read at
    # src's level; an edge into a vertex never reached has its src read at every level. (An
    # edge into a vertex labelled earlier in the same launch may skip its src.)
    src, dst = case.inputs["src"], case.inputs["dst"]
    levels = bfs_levels(*to_csr(int(case.inputs["n"]), src, dst), int(case.inputs["source"]))
    return {"src": levels[dst] < 0, "dst": levels[src] >= 0}


def _pull_must_read(case):
    # Every vertex but the source is unvisited at level 0 and reads its in_ptr entry; an
    # unvisited vertex stops at its first parent, so not every in-edge need be read.
    need = np.zeros(len(case.inputs["in_ptr"]), np.bool_)
    need[:-1] = True
    need[int(case.inputs["source"])] = False
    return {"in_ptr": need, "in_col": False}


# ---- verdicts ----------------------------------------------------------------------------------

BOUNDS_HINT = ("a thread read or wrote past the end of an array: n is not a multiple of the block "
               "size, so the last block has threads with no vertex (v >= n). They must do nothing: "
               "`if v < levels.size` around the whole body.")
FRONTIER_BOUNDS_HINT = ("a thread read past the end of the frontier: its size is rarely a multiple "
                        "of the block size, so the last block has threads with no frontier vertex "
                        "(i >= frontier.size). They must do nothing: `if i < frontier.size` "
                        "around the whole body.")


EDGE_BOUNDS_HINT = ("a thread read or wrote past the end of an array: the number of edges is not a "
                    "multiple of the block size, so the last block has threads with no edge "
                    "(e >= src.size). They must do nothing: `if e < src.size` around the whole "
                    "body.")


UNWRITTEN_HINT = ("a thread used a vertex number that no thread wrote: a frontier slot past the "
                  "ones filled, or a slot taken but never written. Thread i may read frontier[i] "
                  "only if i < frontier.size.")


UNLABELLED = {
    "csr": "does every vertex of the current level look at all of its edges (row_ptr[v] up to, "
           "not including, row_ptr[v + 1])?",
    "edges": "does every edge get a thread (one per edge, src.size of them), and does an edge "
             "whose src is at the current level label its dst?",
}


def diagnose_levels(case, got, spec, form: str = "csr") -> str:
    expected = spec["levels"].astype(np.int64)
    got = np.asarray(got["levels"]).astype(np.int64)
    bad = np.flatnonzero(got != expected)
    if bad.size == 0:
        return ""
    v = int(bad[0])
    exp, g = int(expected[v]), int(got[v])
    if exp == UNVISITED and g >= 0:
        return (f"vertex {v} cannot be reached from the source (no path leads to it), yet it got "
                f"level {g}: label only out-neighbours of vertices of the current level.")
    if exp >= 0 and g == UNVISITED:
        return (f"vertex {v} is at level {exp} (a shortest path of {exp} edges leads to it) but was "
                f"never labelled: {UNLABELLED[form]}")
    if exp >= 0 and g > exp:
        return (f"vertex {v} is at level {exp} but ended at level {g}: a later level overwrote "
                "it. Label only vertices that are still unvisited (level -1): that check is what "
                "makes the search breadth-first.")
    if exp >= 0 and 0 <= g < exp:
        return (f"vertex {v} is at level {exp} but got {g}, as if a shorter path led to it: the "
                "launch for `level` labels the unvisited neighbours of that level's vertices "
                "level + 1 (a neighbour labelled `level` joins the current level, and the wave "
                "runs on within the same launch).")
    return (f"vertex {v} should be at level {exp}, the length of the shortest path from the "
            f"source to it, not {g}.")


class BfsProblem(Problem):
    """A BFS exercise: the checks run the course's loop around the learner's kernel; verdicts say
    which vertex is wrong and what that usually means."""

    bounds_hint = BOUNDS_HINT
    form = "csr"

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs=False)
        if verdict.passed:
            return verdict
        if outcome.error:
            error = outcome.error
            if "global-memory race" in error:
                verdict.hint = (refs.TAIL_ADVICE if "`next_size`" in error
                                else refs.FRONTIER_ADVICE) + "."
            elif "out of bounds" in error or "IndexError" in error:
                verdict.hint = UNWRITTEN_HINT if "2147483647" in error else self.bounds_hint
            elif "NotPrivatized" in error:
                verdict.hint = PRIVATE_HINT
            elif "FrontierError" in error:
                verdict.hint = ("the next frontier must hold every vertex this launch labelled, "
                                "once each: the thread whose cuda.atomic.cas returned -1 appends "
                                "it, at the slot cuda.atomic.add(next_size, 0, 1) returned.")
            return verdict
        if all(v is not None for v in outcome.outputs.values()):
            hint = diagnose_levels(case, outcome.outputs, self.reference_values(case)[0],
                                   self.form)
            if hint:
                verdict.hint = hint
        return verdict

    def simulated_threads(self, case) -> float:
        # One launch per level: the checks' graphs are at most ~100 levels deep.
        return 100.0 * float(case.thread_count) + 2000.0


class EdgeProblem(BfsProblem):
    """The edge-centric BFS: one thread per edge, so a case's work is its edges, not its
    vertices."""

    bounds_hint = EDGE_BOUNDS_HINT
    form = "edges"

    def simulated_threads(self, case) -> float:
        edges = int(np.asarray(case.inputs["src"]).size)
        return 100.0 * (_blocks(edges, case.threads) * float(case.threads)) + 2000.0


class FrontierProblem(BfsProblem):
    bounds_hint = FRONTIER_BOUNDS_HINT

    def run_here(self, submission, case, forget_inputs: bool = False):
        with refs.checking():
            return super().run_here(submission, case, forget_inputs=forget_inputs)


PRIVATE_HINT = (
    "keep a queue per block in shared memory: a counter (cuda.shared.array(1, int32), zeroed by "
    "one thread, then cuda.syncthreads()) that each claiming thread bumps with cuda.atomic.add "
    "to get its slot in the block's queue; after a cuda.syncthreads(), one thread reserves room "
    "for the whole block with a single cuda.atomic.add(next_size, 0, count) and, after another "
    "barrier, the block's threads copy the queue to next_frontier from that start. A vertex that "
    f"finds the block's queue full (make it hold at least {MIN_BLOCK_QUEUE}) goes to next_size "
    "directly.")


class PrivatizedFrontierProblem(FrontierProblem):
    """The frontier queue privatized per block (PMPP §15.6). In CPU mode the checks also watch
    ``next_size`` and the next frontier's slots, launch by launch: a block may update
    ``next_size`` once, plus once per vertex it appended past the first
    :data:`~references.MIN_BLOCK_QUEUE` (its queue's overflow), else
    :class:`~references.NotPrivatized`. On a GPU only correctness is checked."""

    def run_here(self, submission, case, forget_inputs: bool = False):
        with refs.privatized():
            return super().run_here(submission, case, forget_inputs=forget_inputs)

    def simulated_threads(self, case) -> float:
        # a star's one thread appends every vertex in one launch
        return super().simulated_threads(case) + 20.0 * float(case.size)


def _blocks(n, threads):
    return max(1, -(-int(n) // int(threads)))


# n; n % 4 picks the graph: 100 an R-MAT graph (800 edges), 81 a 9 x 9 grid, 70 R-MAT with
# self-loops and doubled edges, 35 a dead end one step from the source; hidden: 2 vertices, 400
# R-MAT (4 times the largest visible), 181 a grid of 14 columns (the last row partial, 25 levels
# or more), two random sizes. On a GPU, up to a grid of 4,800,001 vertices (2,191 columns, about
# 4,400 levels, a launch or more each; about 17 million edges: past 2^24 elements, as every GPU
# exercise's largest hidden case is).
# Every case has a vertex for the learner's kernel to label: the judge fails a call whose kernel
# stored nothing (so a source with no out-edge, or a graph of one vertex, is tested on the
# course's loops in tests/test_ch15.py instead).
CPU_SIZES = Sizes(visible=(100, 81, 70, 35), hidden=(2, 400, 181), hidden_random=(2, 40, 200))
GPU_SIZES = Sizes(visible=(1_000_000, 250_001, 100, 81, 70, 35),
                  hidden=(2, 400, 181, 4_800_001), hidden_random=(2, 60, 1_000_000))


def _push_launch(kernel, inputs, outputs, case):
    bfs_by_levels(kernel, inputs["row_ptr"], inputs["col"], outputs["levels"],
                  int(inputs["source"]), int(case.threads))


def _pull_launch(kernel, inputs, outputs, case):
    bfs_by_levels(kernel, inputs["in_ptr"], inputs["in_col"], outputs["levels"],
                  int(inputs["source"]), int(case.threads))


def _edge_launch(kernel, inputs, outputs, case):
    bfs_by_edges(kernel, inputs["src"], inputs["dst"], outputs["levels"], int(inputs["source"]),
                 int(case.threads))


def _frontier_launch(kernel, inputs, outputs, case):
    bfs_frontier(kernel, inputs["row_ptr"], inputs["col"], outputs["levels"],
                 int(inputs["source"]), int(case.threads))


# ---- 15.1 push ---------------------------------------------------------------------------------

bfs_push = BfsProblem(
    "bfs_push",
    title="BFS, vertex-centric push: one launch per level, one thread per vertex",
    spec=_levels_spec, make_inputs=_graph_inputs, outputs=_levels_outputs, tolerance=_exact,
    launch=_push_launch, block_sizes=(32, 64), visible_block_size=32, blocks_for=_blocks,
    cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_label, must_read=_push_must_read,
    reference=refs.reference_push,
)


# ---- 15.2 pull ---------------------------------------------------------------------------------

bfs_pull = BfsProblem(
    "bfs_pull",
    title="BFS, vertex-centric pull: each unvisited vertex looks for a parent among its "
          "in-neighbours",
    spec=_pull_spec, make_inputs=_pull_inputs, outputs=_levels_outputs, tolerance=_exact,
    launch=_pull_launch, block_sizes=(32, 64), visible_block_size=32, blocks_for=_blocks,
    cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_label, must_read=_pull_must_read,
    reference=refs.reference_pull,
)


# ---- 15.3 edge-centric -------------------------------------------------------------------------

# One thread per edge, 8 edges a vertex: smaller graphs than 15.1's, the same kinds (60 R-MAT,
# 49 a 7 x 7 grid, 38 self-loops and doubled edges, 27 a dead end one step from the source;
# hidden: 2, 240 R-MAT (4 times the largest visible), 121 an 11 x 11 grid of 20 levels or more,
# two random sizes).
EDGE_CPU_SIZES = Sizes(visible=(60, 49, 38, 27), hidden=(2, 240, 121),
                       hidden_random=(2, 30, 120))

bfs_edge = EdgeProblem(
    "bfs_edge",
    title="BFS, edge-centric: one launch per level, one thread per edge of an edge list",
    spec=_edge_spec, make_inputs=_edge_inputs, outputs=_levels_outputs, tolerance=_exact,
    launch=_edge_launch, block_sizes=(32, 64), visible_block_size=32, blocks_for=_blocks,
    cpu_sizes=EDGE_CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_edge_label,
    must_read=_edge_must_read, reference=refs.reference_edge,
)


# ---- 15.4 frontier queue, and the speed test ------------------------------------------------------

@functools.cache
def _speed_edges():
    """The speed graph's two numba functions, compiled on first use."""
    import numba

    @numba.njit(parallel=True, cache=False)
    def fill(seed, scale, t0, t1, t2, src, dst):
        # Edge i's quadrant at bit b from a counter-based hash of (seed, i, b) (splitmix64): the
        # same graph for a seed whatever the number of threads, made on every core.
        for i in numba.prange(src.size):
            s = 0
            d = 0
            for b in range(scale):
                z = np.uint64(seed) + np.uint64(i * 64 + b + 1) * np.uint64(0x9E3779B97F4A7C15)
                z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                r = (z ^ (z >> np.uint64(31))) >> np.uint64(32)       # 32 random bits
                q = (1 if r >= t0 else 0) + (1 if r >= t1 else 0) + (1 if r >= t2 else 0)
                s |= (q >> 1) << b                  # quadrants a, b, c, d = 00, 01, 10, 11
                d |= (q & 1) << b
            src[i] = s
            dst[i] = d

    @numba.njit(cache=False)
    def csr(n, perm, src, dst, row_ptr, col):
        # Vertex numbers shuffled, then a counting sort of the edges by their source.
        for i in range(src.size):
            row_ptr[perm[src[i]] + 1] += 1
        for v in range(n):
            row_ptr[v + 1] += row_ptr[v]
        fill_at = row_ptr[:n].copy()
        for i in range(src.size):
            v = perm[src[i]]
            col[fill_at[v]] = perm[dst[i]]
            fill_at[v] += 1

    return fill, csr


def speed_graph(rng: np.random.Generator, n: int) -> dict:
    """The speed test's graph: R-MAT on n = 2^k vertices, 16 directed edges per vertex (Graph500's
    probabilities, vertex numbers shuffled), from one of its hubs; made with ``numba`` on every
    core (2^22 vertices, 67 million edges, in seconds)."""
    scale = max(1, int(n - 1).bit_length())
    if 1 << scale != n:
        raise ValueError("speed runs use a power-of-two count of vertices")
    fill, csr = _speed_edges()
    m = SPEED_EDGE_FACTOR * n
    a, b, c = refs.RMAT_ABC
    t0, t1, t2 = (int(x * 2 ** 32) for x in (a, a + b, a + b + c))
    src, dst = np.empty(m, np.int32), np.empty(m, np.int32)
    fill(int(rng.integers(1 << 62)), scale, t0, t1, t2, src, dst)
    perm = rng.permutation(n).astype(np.int32)
    row_ptr, col = np.zeros(n + 1, np.int64), np.empty(m, INDEX)
    csr(n, perm, src, dst, row_ptr, col)
    row_ptr = row_ptr.astype(INDEX)
    return {"row_ptr": row_ptr, "col": col, "source": hub_source(rng, row_ptr)}


_speed_levels: dict = {}     # id(col) -> (col, levels): the speed test's few content sets


def speed_sample(inputs, idx):
    """The levels at flat indices ``idx``: the whole BFS on the host, once per graph."""
    col = inputs["col"]
    hit = _speed_levels.get(id(col))
    if hit is None or hit[0] is not col:
        if len(_speed_levels) >= 4:
            _speed_levels.clear()
        hit = (col, bfs_levels(inputs["row_ptr"], col, int(inputs["source"])))
        _speed_levels[id(col)] = hit
    expected = {"levels": hit[1][np.asarray(idx, np.int64)].astype(np.float64)}
    return expected, {"levels": np.zeros(expected["levels"].shape)}


def _speed_shape(n):
    return _blocks(n, 256), 256


def bfs_bytes(n):
    # The least a BFS moves: the graph read once (row_ptr and col, 16 edges a vertex) and every
    # level written once.
    n = int(n)
    return 4 * (n + 1) + 4 * SPEED_EDGE_FACTOR * n + 4 * n


def traversed_edges(row_ptr, col, levels) -> int:
    """Graph500's count for TEPS: the out-edges of every vertex the search reached."""
    deg = np.diff(np.asarray(row_ptr, np.int64))
    return int(deg[np.asarray(levels) >= 0].sum())


def _serial_bfs_factory():
    import numba

    @numba.njit(cache=False)
    def serial(row_ptr, col, source, levels):
        n = levels.size
        for v in range(n):
            levels[v] = -1
        queue = np.empty(n, np.int64)
        levels[source] = 0
        queue[0] = source
        head, tail = 0, 1
        while head < tail:
            v = queue[head]
            head += 1
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if levels[u] == -1:
                    levels[u] = levels[v] + 1
                    queue[tail] = u
                    tail += 1
    return serial


_serial_bfs = njit_on_first_call(_serial_bfs_factory)


def _serial(row_ptr, col, source, levels):
    _serial_bfs(row_ptr, col, int(source), levels)


def _numpy(row_ptr, col, source, levels):
    levels[:] = bfs_levels(row_ptr, col, int(source))


BASELINES = {
    "serial": Baseline("numba.njit BFS with a FIFO queue (1 core)", _serial),
    "numpy": Baseline("NumPy level-synchronous BFS (1 core)", _numpy, at_speed_size=False),
}


bfs_frontier_queue = FrontierProblem(
    "bfs_frontier_queue",
    title="BFS with a frontier queue: one thread per frontier vertex, an atomic tail",
    spec=_levels_spec, make_inputs=_graph_inputs, outputs=_levels_outputs, tolerance=_exact,
    launch=_frontier_launch, block_sizes=(32, 64), visible_block_size=32,
    blocks_for=_blocks, cpu_sizes=CPU_SIZES,
    gpu_sizes=Sizes(visible=GPU_SIZES.visible, hidden=GPU_SIZES.hidden,
                    hidden_random=GPU_SIZES.hidden_random, speed=SPEED_SIZE),
    size_label=_label, must_read=_push_must_read, race_check_outputs=True,
    bytes_moved=bfs_bytes, sample_spec=speed_sample, speed_inputs=speed_graph,
    speed_launch=_speed_shape, reference=refs.reference_frontier, baselines=BASELINES,
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="serial", min_speedup=5.0),
)


# ---- 15.5 privatized frontier ----------------------------------------------------------------------

# 15.4's kinds of graphs, the grids smaller (a launch with barriers costs the simulator more: 49
# a 7 x 7 grid, hidden 121 an 11 x 11 one), and stars (150 vertices, hidden 601): the source's one
# thread appends every other vertex in one launch, more than a block queue of 128 holds (and,
# hidden, of 512), so the overflow path runs.
PRIVATE_CPU_SIZES = Sizes(visible=(100, 49, 70, 35, STAR_SIZES[0]),
                          hidden=(2, 400, 121, STAR_SIZES[1]), hidden_random=(2, 40, 120))
PRIVATE_GPU_SIZES = Sizes(visible=GPU_SIZES.visible + (STAR_SIZES[0],),
                          hidden=GPU_SIZES.hidden + (STAR_SIZES[2],),
                          hidden_random=GPU_SIZES.hidden_random)

bfs_frontier_private = PrivatizedFrontierProblem(
    "bfs_frontier_private",
    title="BFS with a privatized frontier: a queue per block in shared memory, one global "
          "atomic per block",
    spec=_levels_spec, make_inputs=_graph_inputs, outputs=_levels_outputs, tolerance=_exact,
    launch=_frontier_launch, block_sizes=(32, 64), visible_block_size=32,
    blocks_for=_blocks, cpu_sizes=PRIVATE_CPU_SIZES, gpu_sizes=PRIVATE_GPU_SIZES,
    size_label=_label, must_read=_push_must_read, race_check_outputs=True,
    reference=refs.reference_private,
)

__all__ = ["BASELINES", "EDGE_FACTOR", "KINDS", "SPEED_SIZE", "bfs_bytes", "bfs_edge",
           "bfs_frontier_private", "bfs_frontier_queue", "bfs_pull", "bfs_push", "check_graph",
           "diagnose_levels", "kind_of", "neighbours_of", "speed_graph", "speed_sample",
           "traversed_edges"]
