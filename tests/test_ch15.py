"""Chapter 15: do the BFS checks pass correct push, pull, edge-centric, frontier-queue and privatized
frontier kernels written several ways, and fail every classic BFS bug (no visited check, a missing
bounds guard, a level off by one, the reversed graph searched, a frontier tail or claim without an
atomic, a frontier that holds a vertex twice, a guard by vertices over edges, a block queue that
drops its overflow or has threads skip its barriers) with a verdict that says what went wrong?
Does the privatized exercise fail 15.4's unprivatized kernel, saying so? Are the graphs as the chapter says
(R-MAT hubs, a deep grid, self-loops and duplicate edges, unreachable vertices, a source with no
out-edge, a single vertex, sizes that are multiples of nothing), is the host BFS right, do the
speed test's samples and the work counts agree with a plain BFS? Every course kernel also compiles
for a GPU (PTX for compute capability 9.0)."""

import numpy as np
import pytest
from numba import cuda

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import assert_judged, verdict_text

ch15 = ag.problems.ch15
CPU = not ag.backend.is_gpu
PROBLEMS = (ch15.bfs_push, ch15.bfs_pull, ch15.bfs_edge, ch15.bfs_frontier_queue,
            ch15.bfs_frontier_private)


# ---- the graphs and the spec ---------------------------------------------------------------------

def _cases(problem):
    return problem.cases(hidden=False) + problem.cases(hidden=True)


def test_graphs_cover_every_kind_and_edge_case():
    kinds = set()
    for case in _cases(ch15.bfs_push):
        n, row_ptr, col = case.size, case.inputs["row_ptr"], case.inputs["col"]
        source = case.inputs["source"]
        assert row_ptr.dtype == np.int32 and col.dtype == np.int32
        assert row_ptr.size == n + 1 and row_ptr[0] == 0 and row_ptr[-1] == col.size
        assert np.all(np.diff(row_ptr) >= 0) and (col.size == 0 or 0 <= col.min() <= col.max() < n)
        kinds.add(ch15.kind_of(n))
        levels = ch15.bfs_levels(row_ptr, col, source)
        src = np.repeat(np.arange(n), np.diff(row_ptr))
        if ch15.kind_of(n) == "messy" and n > 8:
            assert np.any(src == col)                                       # self-loops
            pairs = src.astype(np.int64) * n + col
            assert np.unique(pairs).size < pairs.size                      # duplicate edges
        if ch15.kind_of(n) == "sink":
            ends = col[row_ptr[source]:row_ptr[source + 1]]
            assert all(row_ptr[u] == row_ptr[u + 1] for u in ends if u != source)  # dead ends
            assert levels.max() == 1
        assert levels.max() >= 1      # the learner's kernel labels someone (the judge needs a store)
        if ch15.kind_of(n) == "rmat" and n >= 100:
            assert (levels < 0).any()                                       # unreachable ones
            deg = np.diff(row_ptr)
            assert deg.max() >= 4 * max(1.0, deg.mean())                    # hubs
        if ch15.kind_of(n) == "grid" and n >= 81:
            assert levels.max() >= 16                                       # deep
    assert kinds == set(ch15.KINDS) and min(c.size for c in ch15.bfs_push.cases(True)) == 2
    sizes = [c.size for c in ch15.bfs_push.cases()]
    assert all(n % 32 for n in sizes)             # a partial last block in every visible case


def test_every_graph_has_a_vertex_to_label_whatever_the_seed():
    """The judge fails a call whose kernel stored nothing: every case's source reaches someone,
    even a grid whose corner lost both its streets, or an R-MAT graph of 2 vertices."""
    from autograder.problems.ch15.specs import reaching_graph
    row_ptr, col, source = reaching_graph(3, [0], [1], 2)       # vertex 2 reaches nobody
    assert col.tolist() == [1, 0] and ch15.bfs_levels(row_ptr, col, source).tolist() == [1, 2, 0]
    for seed in range(40):
        rng = np.random.default_rng(seed)
        for n in (2, 3, 5, 6, 35, 41):
            for kind in ch15.KINDS:
                row_ptr, col, source = ch15.check_graph(rng, n, kind)
                assert ch15.bfs_levels(row_ptr, col, source).max() >= 1, (seed, n, kind)


def test_host_bfs_matches_a_queue_bfs_and_a_hand_example():
    for case in _cases(ch15.bfs_push):
        a = ch15.bfs_levels(case.inputs["row_ptr"], case.inputs["col"], case.inputs["source"])
        b = ch15.bfs_levels_queue(case.inputs["row_ptr"], case.inputs["col"],
                                  case.inputs["source"])
        assert np.array_equal(a, b)
    # 0 -> 1 -> 2 -> 3, 0 -> 2 (a shortcut), 3 -> 0 (a back edge), 4 alone, 5 -> 0 (reaches in)
    row_ptr, col = ch15.to_csr(6, [0, 1, 2, 0, 3, 5], [1, 2, 3, 2, 0, 0])
    assert ch15.bfs_levels(row_ptr, col, 0).tolist() == [0, 1, 1, 2, -1, -1]
    wrong = ch15.bfs_levels(row_ptr, col, 0)
    wrong[3] = 3
    assert not np.array_equal(wrong, ch15.bfs_levels_queue(row_ptr, col, 0))


def test_transpose_reverses_every_edge_and_twice_is_the_graph():
    row_ptr, col = ch15.rmat_graph(np.random.default_rng(4), 50, edge_factor=4)
    in_ptr, in_col = ch15.transpose(row_ptr, col)
    back_ptr, back_col = ch15.transpose(in_ptr, in_col)
    assert np.array_equal(back_ptr, row_ptr) and np.array_equal(back_col, col)
    src = np.repeat(np.arange(50), np.diff(row_ptr))
    dst = np.repeat(np.arange(50), np.diff(in_ptr))
    assert sorted(zip(src.tolist(), col.tolist())) == sorted(zip(in_col.tolist(), dst.tolist()))
    for case in ch15.bfs_pull.cases():                 # the pull spec is the forward BFS
        row_ptr, col = ch15.transpose(case.inputs["in_ptr"], case.inputs["in_col"])
        expected = ch15.bfs_pull.expected(case)["levels"]
        assert np.array_equal(expected, ch15.bfs_levels(row_ptr, col, case.inputs["source"]))


def test_rmat_follows_the_graph500_probabilities():
    src, dst = ch15.rmat_edges(np.random.default_rng(0), 1, 200_000)
    # one bit before the shuffle of vertex numbers: quadrants a, b, c, d; after it, 0 and 1 may
    # swap, so compare the sorted shares
    shares = np.bincount(2 * src + dst, minlength=4) / src.size
    assert np.allclose(sorted(shares), sorted([0.57, 0.19, 0.19, 0.05]), atol=0.01)


def test_work_counts_agree_with_a_brute_force_count():
    rng = np.random.default_rng(2)
    for row_ptr, col, source in (ch15.check_graph(rng, 200, "rmat") ,
                                 ch15.check_graph(rng, 49, "grid")):
        levels = ch15.bfs_levels(row_ptr, col, source)
        in_ptr, in_col = ch15.transpose(row_ptr, col)
        for r in ch15.work_per_level(row_ptr, col, source):
            lv = r["level"]
            frontier = np.flatnonzero(levels == lv)
            assert r["push_edges"] == int(np.diff(row_ptr)[frontier].sum())
            pull = 0
            for v in np.flatnonzero((levels == -1) | (levels > lv)):
                seg = in_col[in_ptr[v]:in_ptr[v + 1]]
                hit = np.flatnonzero(levels[seg] == lv)
                pull += int(hit[0]) + 1 if hit.size else seg.size
            assert r["pull_edges"] == pull


def test_the_speed_sample_agrees_with_a_plain_bfs():
    from autograder.problems.ch15.specs import speed_sample
    graph = ch15.speed_graph(np.random.default_rng(3), 1 << 12)
    assert graph["col"].size == 16 << 12
    expected = ch15.bfs_levels_queue(graph["row_ptr"], graph["col"], graph["source"])
    idx = np.array([0, 5, 4095, graph["source"]])
    got, tol = speed_sample(graph, idx)
    assert np.array_equal(got["levels"], expected[idx]) and not tol["levels"].any()
    assert got["levels"][-1] == 0 and (expected >= 0).mean() > 0.3   # from a hub: reaches much
    again = ch15.speed_graph(np.random.default_rng(3), 1 << 12)       # the same for a seed
    assert all(np.array_equal(graph[k], again[k]) for k in ("row_ptr", "col"))
    deg = np.diff(graph["row_ptr"])
    assert deg.max() > 20 * deg.mean() and (deg == 0).mean() > 0.2    # R-MAT's hubs and leaves


# ---- 15.1 push ----------------------------------------------------------------------------------

def _push(visited=True, guard=True, next_level=1):
    """A 15.1 push kernel: right with the defaults, else with one classic bug (no visited check;
    no bounds guard; neighbours labelled level + ``next_level``)."""
    @cuda.jit
    def push(row_ptr, col, levels, level, changed):
        v = cuda.grid(1)
        if guard and v >= levels.size:
            return
        if levels[v] == level:
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if not visited or levels[u] == -1:
                    levels[u] = level + next_level
                    changed[0] = 1
    return push


@cuda.jit
def push_atomic(row_ptr, col, levels, level, changed):
    v = cuda.grid(1)
    if v < levels.size and levels[v] == level:
        for e in range(row_ptr[v], row_ptr[v + 1]):
            if cuda.atomic.cas(levels, col[e], -1, level + 1) == -1:
                cuda.atomic.max(changed, 0, 1)


PUSH_CASES = {
    "plain stores (benign race)": (_push(), None),
    "atomics": (push_atomic, None),
    "course reference": (ch15.reference_push(), None),
    "no visited check": (_push(visited=False), "a later level overwrote it"),
    "no bounds guard": (_push(guard=False), "`if v < levels.size`"),
    "labels level": (_push(next_level=0), "as if a shorter path led to it"),
    "labels level + 2": (_push(next_level=2), "but was never labelled"),
}


@pytest.mark.parametrize("name", PUSH_CASES)
def test_push_verdict(name):
    fn, expected = PUSH_CASES[name]
    assert_judged(ch15.bfs_push, fn, expected, hidden=expected is None)


# ---- 15.2 pull ----------------------------------------------------------------------------------

def _pull(visited=True, stop=True):
    @cuda.jit
    def pull(in_ptr, in_col, levels, level, changed):
        v = cuda.grid(1)
        if v < levels.size and (not visited or levels[v] == -1):
            for e in range(in_ptr[v], in_ptr[v + 1]):
                if levels[in_col[e]] == level:
                    levels[v] = level + 1
                    changed[0] = 1
                    if stop:
                        break
    return pull


PULL_CASES = {
    "break at the first parent": (_pull(), None),
    "scan every in-edge": (_pull(stop=False), None),
    "course reference": (ch15.reference_pull(), None),
    "no visited check": (_pull(visited=False), "a later level overwrote it"),
    "pushes along the transpose": (ch15.reference_push(), "cannot be reached from the source"),
}


@pytest.mark.parametrize("name", PULL_CASES)
def test_pull_verdict(name):
    fn, expected = PULL_CASES[name]
    assert_judged(ch15.bfs_pull, fn, expected, hidden=expected is None)


# ---- 15.3 frontier queue ------------------------------------------------------------------------

def _frontier(claim="cas", tail="atomic", guard=True, check_claim=True, precheck=False):
    """A 15.3 kernel: right with the defaults, else with one bug: ``claim="plain"`` (test then
    store), ``tail="plain"`` (next_size[0] += 1), no bounds guard, or the cas's result ignored
    (every neighbour appended). ``precheck``: a plain read skips visited neighbours first."""
    @cuda.jit
    def frontier_kernel(row_ptr, col, levels, frontier, next_frontier, next_size, level):
        i = cuda.grid(1)
        if guard and i >= frontier.size:
            return
        v = frontier[i]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            u = col[e]
            if precheck and levels[u] != -1:
                continue
            if claim == "cas":
                mine = cuda.atomic.cas(levels, u, -1, level + 1) == -1 or not check_claim
            else:
                mine = levels[u] == -1
                if mine:
                    levels[u] = level + 1
            if mine:
                if tail == "atomic":
                    slot = cuda.atomic.add(next_size, 0, 1)
                else:
                    slot = next_size[0]
                    next_size[0] = slot + 1
                next_frontier[slot] = u
    return frontier_kernel


FRONTIER_CASES = {
    "cas and an atomic tail": (_frontier(), None),
    "a plain read before the cas": (_frontier(precheck=True), None),
    "course reference": (ch15.reference_frontier(), None),
    "plain tail": (_frontier(tail="plain"), "cuda.atomic.add(next_size, 0, 1)"),
    "plain claim": (_frontier(claim="plain"), "global-memory race on the levels"),
    "no bounds guard": (_frontier(guard=False), "`if i < frontier.size`"),
    "appends every neighbour": (_frontier(check_claim=False), "more than once"),
}


@pytest.mark.parametrize("name", FRONTIER_CASES)
def test_frontier_verdict(name):
    fn, expected = FRONTIER_CASES[name]
    if not CPU and name in ("plain tail", "plain claim"):
        pytest.skip("the race detector runs in CPU mode only")
    assert_judged(ch15.bfs_frontier_queue, fn, expected, hidden=expected is None)


def test_a_frontier_slot_never_written_is_named():
    @cuda.jit
    def skips_a_slot(row_ptr, col, levels, frontier, next_frontier, next_size, level):
        i = cuda.grid(1)
        if i < frontier.size:
            v = frontier[i]
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                    slot = cuda.atomic.add(next_size, 0, 2)        # two slots, one written
                    next_frontier[slot] = u
    text = verdict_text(ch15.bfs_frontier_queue, skips_a_slot, hidden=False)
    assert text and "never written" in text, text


def test_host_levels_behind_a_kernel_fail_on_provenance():
    """Levels computed on the host from copies of the graph, stored by a kernel: right values,
    not the exercise."""
    @cuda.jit
    def store(levels, table):
        v = cuda.grid(1)
        if v < levels.size:
            levels[v] = table[v]

    class HostBfs:
        def __getitem__(self, config):
            def run(row_ptr, col, levels, level, changed):
                if level == 0:
                    p, c = row_ptr.copy_to_host(), col.copy_to_host()
                    lv = levels.copy_to_host()
                    graph = (p.size == lv.size + 1 and p[0] == 0 and p[-1] == c.size
                             and np.all(np.diff(p) >= 0) and np.all((c >= 0) & (c < lv.size))
                             and (lv == 0).sum() == 1)
                    # what came back is the check's decoy, not the graph: store anything
                    table = ch15.bfs_levels(p, c, int(np.flatnonzero(lv == 0)[0])) if graph \
                        else np.zeros(lv.size)
                    store[config](levels, cuda.to_device(table.astype(np.int32)))
            return run
    text = verdict_text(ch15.bfs_push, HostBfs(), hidden=False)
    assert text and "copied to the host" in text, text


# ---- 15.3 edge-centric -----------------------------------------------------------------------------

def _edge(guard="edges", visited=True, backwards=False):
    """A 15.3 kernel: right with the defaults, else with one bug: no bounds guard
    (``guard=None``), a guard by the vertex count (``guard="vertices"``), no visited check, or
    every edge followed from dst to src."""
    @cuda.jit
    def edge(src, dst, levels, level, changed):
        e = cuda.grid(1)
        if guard == "edges" and e >= src.size:
            return
        if guard == "vertices" and e >= levels.size:
            return
        a, b = (dst[e], src[e]) if backwards else (src[e], dst[e])
        if levels[a] == level and (not visited or levels[b] == -1):
            levels[b] = level + 1
            changed[0] = 1
    return edge


EDGE_CASES = {
    "plain stores (benign race)": (_edge(), None),
    "course reference": (ch15.reference_edge(), None),
    "no bounds guard": (_edge(guard=None), "`if e < src.size`"),
    "guard by the vertex count": (_edge(guard="vertices"), "does every edge get a thread"),
    "no visited check": (_edge(visited=False), "levels"),       # relabels, or loses the source
    "edges followed backwards": (_edge(backwards=True), "vertex"),
}


@pytest.mark.parametrize("name", EDGE_CASES)
def test_edge_verdict(name):
    fn, expected = EDGE_CASES[name]
    assert_judged(ch15.bfs_edge, fn, expected, hidden=expected is None)


def test_edge_lists_are_the_graphs_shuffled_with_a_few_edges_doubled():
    for case in _cases(ch15.bfs_edge):
        src, dst, n = case.inputs["src"], case.inputs["dst"], case.inputs["n"]
        assert src.dtype == np.int32 and dst.dtype == np.int32 and n == case.size
        row_ptr, col = ch15.to_csr(n, src, dst)
        expected = ch15.bfs_edge.expected(case)["levels"]
        assert np.array_equal(expected, ch15.bfs_levels(row_ptr, col, case.inputs["source"]))
        pairs = src.astype(np.int64) * n + dst
        assert np.unique(pairs).size < pairs.size              # some edge appears twice
        if src.size > 64:
            assert np.any(np.diff(src) < 0)                     # not in CSR order
    assert any(c.inputs["src"].size % 32 for c in ch15.bfs_edge.cases())
    assert all(c.inputs["src"].size % 32 for c in ch15.bfs_edge.cases()
               if ch15.kind_of(c.size) == "rmat")               # 8n + 1..3 edges


# ---- 15.5 privatized frontier ------------------------------------------------------------------------

def _private(overflow=True, early_return=False, reserve_barrier=True):
    """A 15.5 kernel (a block queue of 64): right with the defaults, else with one bug: the
    overflow dropped, threads past the frontier returning before the barriers, or no barrier
    between filling the block queue and reserving its room."""
    from numba import int32

    @cuda.jit
    def private(row_ptr, col, levels, frontier, next_frontier, next_size, level):
        b_queue = cuda.shared.array(64, int32)
        b_count = cuda.shared.array(1, int32)
        b_start = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        if early_return and i >= frontier.size:
            return
        if t == 0:
            b_count[0] = 0
        cuda.syncthreads()
        if i < frontier.size:
            v = frontier[i]
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = col[e]
                if cuda.atomic.cas(levels, u, -1, level + 1) == -1:
                    k = cuda.atomic.add(b_count, 0, 1)
                    if k < 64:
                        b_queue[k] = u
                    elif overflow:
                        next_frontier[cuda.atomic.add(next_size, 0, 1)] = u
        if reserve_barrier:
            cuda.syncthreads()
        if t == 0:
            b_count[0] = min(b_count[0], 64)
            b_start[0] = cuda.atomic.add(next_size, 0, b_count[0])
        cuda.syncthreads()
        for k in range(t, b_count[0], cuda.blockDim.x):
            next_frontier[b_start[0] + k] = b_queue[k]
    return private


PRIVATE_CASES = {
    "a block queue of 64": (_private(), None),
    "15.4's kernel": (_frontier(), "asks for a privatized frontier, and this kernel is not"),
    "overflow dropped": (_private(overflow=False), "is not in the next frontier"),
    "early return": (_private(early_return=True), "cuda.syncthreads"),
    "no barrier before the reservation": (_private(reserve_barrier=False),
                                          "shared-memory race"),
}


@pytest.mark.parametrize("name", PRIVATE_CASES)
def test_private_verdict(name):
    fn, expected = PRIVATE_CASES[name]
    if not CPU and name != "overflow dropped" and expected is not None:
        pytest.skip("privatization, barriers and shared-memory races are checked in CPU mode only")
    assert_judged(ch15.bfs_frontier_private, fn, expected, hidden=expected is None)


def test_the_privatized_verdict_names_the_block_and_the_level():
    text = verdict_text(ch15.bfs_frontier_private, _frontier(), hidden=False)
    if CPU:
        assert "launch for level 0, block 0 appended" in text and "atomic updates of next_size" \
            in text and "(one per vertex)" in text, text
        assert "queue per block in shared memory" in text                  # the hint


def test_the_privatization_rule_counts_per_block_with_the_overflow():
    from autograder.problems.ch15.references import NotPrivatized, check_privatized
    b0, b1 = (0, 0, 0), (1, 0, 0)
    # block 0 filled slots 0..99 (36 past a queue of 64), block 1 slots 100..109
    log = [("slot", k, b0) for k in range(100)] + [("slot", k, b1) for k in range(100, 110)]
    check_privatized(log + [("tail", 0, b0)] * 37 + [("tail", 0, b1)], 110, 3)
    with pytest.raises(NotPrivatized, match="block 0 appended 100 vertices with 38"):
        check_privatized(log + [("tail", 0, b0)] * 38, 110, 3)
    with pytest.raises(NotPrivatized, match="block 1 appended 10 vertices with 2"):
        check_privatized(log + [("tail", 0, b1)] * 2, 110, 3)
    # a slot counts for the block that stored it last, and only below the frontier's size
    moved = log + [("slot", 5, b1)]
    with pytest.raises(NotPrivatized, match="block 0 appended 99 vertices with 37"):
        check_privatized(moved + [("tail", 0, b0)] * 37, 110, 3)
    with pytest.raises(NotPrivatized, match="block 1 appended 0 vertices with 2"):
        check_privatized([("slot", 200, b1), ("tail", 0, b1), ("tail", 0, b1)], 110, 3)
    check_privatized([("tail", 0, b1)], 0, 3)             # a block that found nothing: one add


def test_the_star_overflows_every_block_queue_and_labels_everyone():
    row_ptr, col, source = ch15.check_graph(np.random.default_rng(0), 150)
    levels = ch15.bfs_levels(row_ptr, col, source)
    assert ch15.kind_of(150) == "star" and (levels == 1).sum() == 149 and levels[source] == 0
    assert any(c.size == 150 for c in ch15.bfs_frontier_private.cases())
    assert any(c.size == 601 for c in ch15.bfs_frontier_private.cases(hidden=True))


def test_measure_accepts_every_kind_of_search():
    k = ch15.reference_push()
    with pytest.raises(ValueError, match="not one of push, pull, edge, frontier, private"):
        ch15.measure({"x": ("sideways", k)})
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch15.measure({kind: (kind, k) for kind in ("push", "pull", "edge", "frontier",
                                                        "private")})


# ---- the loops and the course's kernels -----------------------------------------------------------

def test_the_loops_stop_after_the_last_level_and_count_launches():
    row_ptr, col = ch15.to_csr(6, [0, 1, 2, 3, 4], [1, 2, 3, 4, 5])      # a path of 6
    src, dst = ch15.edge_list(row_ptr, col)
    for loop, kernel, a, b in ((ch15.bfs_by_levels, ch15.reference_push(), row_ptr, col),
                               (ch15.bfs_by_edges, ch15.reference_edge(), src, dst),
                               (ch15.bfs_frontier, ch15.reference_frontier(), row_ptr, col),
                               (ch15.bfs_frontier, ch15.reference_private(), row_ptr, col)):
        d_levels = cuda.device_array(6, np.int32)
        launches = loop(kernel, cuda.to_device(a), cuda.to_device(b), d_levels, 0, 32)
        assert d_levels.copy_to_host().tolist() == [0, 1, 2, 3, 4, 5]
        assert launches == 6                  # levels 0..4 label someone; level 5 labels nobody


@pytest.mark.parametrize("kind", ["push", "pull", "edge", "frontier", "private"])
def test_the_loops_handle_a_source_with_no_out_edge_and_a_single_vertex(kind):
    """The graphs where a correct kernel labels nothing (the judge's checks leave them out: it
    fails a call whose kernel stored nothing): the loops stop after one launch, levels right."""
    kernel = {"push": _push(), "pull": _pull(), "frontier": _frontier(),
              "edge": ch15.reference_edge(), "private": ch15.reference_private()}[kind]
    loop = {"frontier": ch15.bfs_frontier, "private": ch15.bfs_frontier,
            "edge": ch15.bfs_by_edges}.get(kind, ch15.bfs_by_levels)
    for n, src, dst, source in ((1, [], [], 0), (5, [1, 2, 3], [0, 0, 4], 0),
                                (4, [0, 1], [0, 2], 0)):            # a self-loop only
        row_ptr, col = ch15.to_csr(n, src, dst)
        if kind == "pull":
            row_ptr, col = ch15.transpose(row_ptr, col)
        if kind == "edge":
            row_ptr, col = ch15.edge_list(row_ptr, col)
        d_levels = cuda.device_array(n, np.int32)
        launches = loop(kernel, cuda.to_device(row_ptr), cuda.to_device(col), d_levels, source,
                        32)
        expected = [0] + [-1] * (n - 1)
        assert d_levels.copy_to_host().tolist() == expected and launches == 1


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """Every course kernel of the chapter compiles for compute capability 9.0."""
    assert_compiles_for_h200("ch15", (
        "r.cuda, r.int32 = cuda, numba.int32\n"
        "i = types.int32[::1]\n"
        "k = r._bfs_kernels.__wrapped__(); init = r._init_levels.__wrapped__()\n"
        "sigs = [(k['push'], (i, i, i, types.int64, i)), (k['pull'], (i, i, i, types.int64, i)),\n"
        "        (k['edge'], (i, i, i, types.int64, i)),\n"
        "        (k['frontier'], (i, i, i, i, i, i, types.int64)),\n"
        "        (k['private'], (i, i, i, i, i, i, types.int64)), (init, (i, types.int64))]\n"), 6)
