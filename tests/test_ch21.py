"""Chapter 21: do the checks pass correct code written several ways (counts clamped in either
order, the power form and de Casteljau's lerps, a thread per point with a search for its curve,
a quadtree whose table is zeroed from the host) and fail the classic bugs (a count rounded, not
truncated; u = k / count; no loop over a curve's points; offsets from an inclusive scan; a node
split at capacity; a table never cleared) with a verdict that says what is wrong? Are the specs
right (against plain loops, and a quadtree built recursively, depth first), is the tessellation's
tolerance the error bound of a float32 evaluation (0.9 of it passes, 1.1 fails), does the speed
test's sample agree with the whole spec, and does the measuring cell run every way?"""

import math

import numpy as np
import pytest
from numba import cuda, float32, int32

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import NamedInCpuMode, assert_judged, verdict_text

ch21 = ag.problems.ch21
CPU = not ag.backend.is_gpu


# ---- the specs ---------------------------------------------------------------------------------------

def test_counts_follow_the_books_formula_and_avoid_the_steps():
    cp = ch21.make_curves(np.random.default_rng(3), 2000)
    counts = ch21.counts_of(cp)
    for i in range(0, 2000, 97):
        p0, p1, p2 = (cp[i, k].astype(np.float64) for k in range(3))
        c = math.dist(p1, (p0 + p2) / 2) / math.dist(p2, p0)
        assert counts[i] == min(max(int(c * 16), 4), 32)
    assert set(counts.tolist()) == set(range(4, 33))        # every count, the clamped ones too
    v = ch21.curvature(cp) * 16
    inside = (v > 4.5) & (v < 32.5)
    assert np.all(np.abs(v[inside] - np.round(v[inside])) >= 1e-3)
    # float32 curvatures, computed in any order, give the same counts
    p = cp.astype(np.float32)
    mid = p[:, 1] - np.float32(0.5) * (p[:, 0] + p[:, 2])
    chord = p[:, 2] - p[:, 0]
    c32 = np.sqrt((mid * mid).sum(1)) / np.sqrt((chord * chord).sum(1))
    assert np.array_equal(np.clip(np.minimum(c32 * np.float32(16), 32).astype(np.int64), 4, 32),
                          counts)


def test_bezier_spec_and_its_tolerance():
    cp = ch21.make_curves(np.random.default_rng(4), 30)
    counts = ch21.random_counts(np.random.default_rng(5), 30, 500)
    assert counts.sum() == 500 and counts.min() >= 4 and counts.max() <= 32
    pts, mag = ch21.bezier_host(cp, counts)
    off = np.concatenate([[0], np.cumsum(counts)])
    for i in (0, 7, 29):
        assert np.allclose(pts[off[i]], cp[i, 0], rtol=1e-15, atol=0)          # B(0) = P0
        assert np.allclose(pts[off[i + 1] - 1], cp[i, 2], rtol=1e-13, atol=1e-300)
        k = 3
        u = k / (counts[i] - 1)
        assert np.allclose(pts[off[i] + k], (1 - u) ** 2 * cp[i, 0] + 2 * u * (1 - u) * cp[i, 1]
                           + u * u * cp[i, 2], rtol=1e-12)
    tol = ch21.bezier_tolerance(mag)
    # float32 evaluations in three forms stay inside the bound
    c = np.repeat(np.arange(30), counts)
    k = np.arange(500) - off[c]
    u = (k.astype(np.float32) / (counts[c] - 1).astype(np.float32))[:, None]
    w = np.float32(1) - u
    P0, P1, P2 = (cp[c, j] for j in range(3))
    bern = w * w * P0 + np.float32(2) * u * w * P1 + u * u * P2
    power = P0 + np.float32(2) * u * (P1 - P0) + u * u * (P0 - np.float32(2) * P1 + P2)
    a, b = P0 + u * (P1 - P0), P1 + u * (P2 - P1)
    lerp = a + u * (b - a)
    for form in (bern, power, lerp):
        assert form.dtype == np.float32 and np.all(np.abs(form - pts) <= tol)
    # u = k / count instead of k / (count - 1): far outside
    wrong_u = (k / counts[c])[:, None]
    wrong = (1 - wrong_u) ** 2 * P0 + 2 * wrong_u * (1 - wrong_u) * P1 + wrong_u ** 2 * P2
    assert np.mean(np.abs(wrong - pts) > tol) > 0.5
    # the sample agrees with the whole spec
    idx = np.array([0, 1, 2, 999, 500, 37])
    expected, stol = ch21.bezier_sample({"cp": cp, "counts": counts}, idx)
    assert np.array_equal(expected["points"], pts.reshape(-1)[idx])
    assert np.array_equal(stol["points"], tol.reshape(-1)[idx])


def test_the_tessellation_bound_through_the_checks_judgement():
    from autograder.core.checks import Outcome
    problem = ch21.tessellate
    case = problem.cases()[0]
    expected, tol = problem.reference_values(case)
    for factor, passes in ((0.9, True), (1.1, False)):
        got = expected["points"].astype(np.float32)
        got[7, 1] = np.float32(expected["points"][7, 1] + factor * tol["points"][7, 1])
        verdict = problem.judge(case, Outcome(outputs={"points": got},
                                              guard_intact={"points": True}))
        assert verdict.passed == passes, (factor, str(verdict))
    off = np.concatenate([[0], np.cumsum(case.inputs["counts"])])
    curve = int(np.searchsorted(off, 7, side="right") - 1)
    assert f"point {7 - off[curve]} of curve {curve} " in str(verdict), str(verdict)


def test_sizes_spread_their_totals():
    for size in [(37, 600), (19, 76), (5, 160), (150, 2500), (3, 1), (199, 7)]:
        t = ch21.total_of(size)
        assert 4 * size[0] <= t <= 32 * size[0]
    assert ch21.total_of((37, 600)) == 600


def _recursive_quadtree(x, y, capacity, max_depth):
    """Depth first, node by node: the definition, not the waves."""
    leaf = np.zeros(x.size, np.int64)

    def visit(ids, code, x0, y0, side, depth):
        if ids.size <= capacity or depth == max_depth:
            leaf[ids] = code
            return
        half = side / 2
        for q in range(4):
            qx, qy = q & 1, q >> 1
            cx, cy = x0 + qx * half, y0 + qy * half
            inside = ids[(x[ids] >= cx) & (x[ids] < cx + half) & (y[ids] >= cy) & (y[ids] < cy + half)]
            visit(inside, 4 * code + q, cx, cy, half, depth + 1)

    visit(np.arange(x.size), 1, 0.0, 0.0, 1.0, 0)
    return leaf


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_quadtree_spec_is_the_recursive_definition(seed):
    inputs = ch21.quadtree_inputs(np.random.default_rng(seed), 400)
    x = inputs["x"].astype(np.float64)
    y = inputs["y"].astype(np.float64)
    for capacity, depth in ((inputs["capacity"], inputs["max_depth"]), (3, 7), (0, 2)):
        got = ch21.quadtree_host(x, y, capacity, depth)
        assert np.array_equal(got, _recursive_quadtree(x, y, capacity, depth))
    assert np.all((x >= 0) & (x < 1) & (y >= 0) & (y < 1))
    assert ch21.cell_of(1) == (0.0, 0.0, 1.0) and ch21.cell_of(4 * 1 + 3) == (0.5, 0.5, 0.5)
    assert ch21.cell_of(4 * 5 + 1) == (0.75, 0.0, 0.25)      # bottom right, then its right quarter
    assert ch21.cell_of(4 * 6 + 1) == (0.25, 0.5, 0.25)      # top left, then its right quarter


# ---- 21.1 the counts --------------------------------------------------------------------------------

def _counts(rounded=False, no_clamp=False, inverted=False, clamp_first=False):
    @cuda.jit
    def kernel(cp, counts):
        i = cuda.grid(1)
        if i < cp.shape[0]:
            mx = cp[i, 1, 0] - (cp[i, 0, 0] + cp[i, 2, 0]) / 2
            my = cp[i, 1, 1] - (cp[i, 0, 1] + cp[i, 2, 1]) / 2
            chord = math.sqrt((cp[i, 2, 0] - cp[i, 0, 0]) ** 2 + (cp[i, 2, 1] - cp[i, 0, 1]) ** 2)
            mid = math.sqrt(mx * mx + my * my)
            c = chord / mid if inverted else mid / chord
            v = c * 16.0
            if clamp_first:
                v = max(4.0, min(v, 32.0))
                counts[i] = int(v)
            elif rounded:
                counts[i] = min(max(int(round(v)), 4), 32)
            elif no_clamp:
                counts[i] = max(int(min(v, 1e6)), 4)
            else:
                counts[i] = min(max(int(min(v, 64.0)), 4), 32)
    return kernel


@pytest.mark.parametrize("flags,expected", [
    ({}, None), ({"clamp_first": True}, None),
    ({"rounded": True}, "int() truncates"),
    ({"no_clamp": True}, "at most 32"),
    ({"inverted": True}, "over the chord's length"),
])
def test_counts_verdict(flags, expected):
    assert_judged(ch21.tess_counts, _counts(**flags), expected)


# ---- 21.2 the tessellation -------------------------------------------------------------------------

def _tess_kernel(form="bernstein", u_over_count=False, loop=True):
    @cuda.jit
    def kernel(cp, counts, offsets, points):
        b = cuda.blockIdx.x
        count = counts[b]
        step = cuda.blockDim.x if loop else count + 1
        for k in range(cuda.threadIdx.x, count, step):
            u = float32(k) / float32(count if u_over_count else count - 1)
            for c in range(2):
                p0, p1, p2 = cp[b, 0, c], cp[b, 1, c], cp[b, 2, c]
                if form == "lerp":
                    a = p0 + u * (p1 - p0)
                    e = p1 + u * (p2 - p1)
                    points[offsets[b] + k, c] = a + u * (e - a)
                elif form == "power":
                    points[offsets[b] + k, c] = (p0 + float32(2) * u * (p1 - p0)
                                                 + u * u * (p0 - float32(2) * p1 + p2))
                else:
                    w = float32(1) - u
                    points[offsets[b] + k, c] = w * w * p0 + float32(2) * u * w * p1 + u * u * p2
    return kernel


@cuda.jit
def _inclusive_serial(counts, offsets):
    if cuda.grid(1) == 0:
        run = 0
        for i in range(counts.size):
            run += counts[i]
            offsets[i] = run


def _tessellate(inclusive=False, **flags):
    kernel = _tess_kernel(**flags)

    def tessellate(cp, counts, points, threads):
        n = cp.shape[0]
        offsets = cuda.device_array(n, np.int32)
        if inclusive:
            _inclusive_serial[1, 1](counts, offsets)
        else:
            ch21.exclusive_scan(counts, offsets)
        kernel[n, threads](cp, counts, offsets, points)
    return tessellate


@cuda.jit
def _point_per_thread(cp, counts, offsets, total, points):
    # A thread per point: a binary search over the offsets finds its curve.
    p = cuda.grid(1)
    if p < total:
        lo, hi = 0, cp.shape[0] - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if offsets[mid] <= p:
                lo = mid
            else:
                hi = mid - 1
        k = p - offsets[lo]
        u = float32(k) / float32(counts[lo] - 1)
        w = float32(1) - u
        for c in range(2):
            points[p, c] = w * w * cp[lo, 0, c] + float32(2) * u * w * cp[lo, 1, c] + u * u * cp[lo, 2, c]


def _tessellate_per_point(cp, counts, points, threads):
    n = cp.shape[0]
    offsets = cuda.device_array(n, np.int32)
    ch21.exclusive_scan(counts, offsets)
    total = points.shape[0]
    _point_per_thread[(total + threads - 1) // threads, threads](cp, counts, offsets, total, points)


@pytest.mark.parametrize("name,fn,expected", [
    ("lerp", _tessellate(form="lerp"), None),
    ("power", _tessellate(form="power"), None),
    ("point per thread", _tessellate_per_point, None),
    ("u over count", _tessellate(u_over_count=True), "u = k / (counts[i] − 1)"),
    ("no loop", _tessellate(loop=False), "never written"),
    ("inclusive scan", _tessellate(inclusive=True), "out of bounds"),
])
def test_tessellate_verdict(name, fn, expected):
    assert_judged(ch21.tessellate, fn, expected, hidden=name in ("lerp", "point per thread"))


@cuda.jit
def _put_points(src, points):
    i = cuda.grid(1)
    if i < points.shape[0]:
        points[i, 0] = src[i, 0]
        points[i, 1] = src[i, 1]


def test_tessellation_on_the_host_is_caught():
    """The host's points (from the inputs read back) stored by a kernel: the inputs read back are
    decoys in CPU mode, and reading them back is flagged on a GPU."""
    def host_tessellate(cp, counts, points, threads):
        pts, _ = ch21.bezier_host(cp.copy_to_host(), counts.copy_to_host())
        _put_points[(points.shape[0] + 31) // 32, 32](cuda.to_device(pts.astype(np.float32)),
                                                       points)
    assert verdict_text(ch21.tessellate, host_tessellate, hidden=False) is not None


# ---- 21.3 the quadtree --------------------------------------------------------------------------------

def _quadtree(at_capacity=False, never_cleared=False, swapped=False, one_wave_short=False,
              plain_add=False):
    @cuda.jit
    def root(leaf):
        i = cuda.grid(1)
        if i < leaf.size:
            leaf[i] = 1

    @cuda.jit
    def clear(table, m):
        j = cuda.grid(1)
        if j < m:
            table[j] = 0

    @cuda.jit
    def wave_count(leaf, first, table):
        i = cuda.grid(1)
        if i < leaf.size and leaf[i] >= first:
            if plain_add:
                table[leaf[i] - first] += 1
            else:
                cuda.atomic.add(table, leaf[i] - first, 1)

    @cuda.jit
    def wave_split(x, y, leaf, d, capacity, table):
        i = cuda.grid(1)
        if i < leaf.size:
            first = 1 << (2 * d)
            code = leaf[i]
            if code >= first:
                n = table[code - first]
                if n > capacity or (at_capacity and n == capacity):
                    qx = int32(x[i] * float32(1 << (d + 1))) & 1
                    qy = int32(y[i] * float32(1 << (d + 1))) & 1
                    if swapped:
                        qx, qy = qy, qx
                    leaf[i] = 4 * code + qx + 2 * qy

    def build(x, y, capacity, max_depth, leaf, table, threads):
        n = leaf.size
        blocks = (n + threads - 1) // threads
        root[blocks, threads](leaf)
        if never_cleared:
            clear[(table.size + threads - 1) // threads, threads](table, table.size)
        for d in range(max_depth - 1 if one_wave_short else max_depth):
            if not never_cleared:
                clear[(4 ** d + threads - 1) // threads, threads](table, 4 ** d)
            wave_count[blocks, threads](leaf, 4 ** d, table)
            wave_split[blocks, threads](x, y, leaf, d, capacity, table)
    return build


@pytest.mark.parametrize("flags,expected", [
    ({}, None),
    ({"at_capacity": True}, "MORE than capacity"),
    ({"plain_add": True}, NamedInCpuMode("race")),
    ({"never_cleared": True}, "cleared before each wave"),
    ({"swapped": True}, "qx = int(x"),
    ({"one_wave_short": True}, "d = 0 .. max_depth − 1"),
])
def test_quadtree_verdict(flags, expected):
    assert_judged(ch21.quadtree, _quadtree(**flags), expected, hidden=not flags)


def test_quadtree_on_the_host_is_caught():
    @cuda.jit
    def store(codes, leaf, x, y):
        i = cuda.grid(1)
        if i < leaf.size:
            leaf[i] = codes[i] + int32(x[i] * 0) + int32(y[i] * 0)

    def host_build(x, y, capacity, max_depth, leaf, table, threads):
        codes = ch21.quadtree_host(x.copy_to_host(), y.copy_to_host(), capacity, max_depth)
        store[(leaf.size + threads - 1) // threads, threads](cuda.to_device(codes.astype(np.int32)),
                                                             leaf, x, y)
    assert verdict_text(ch21.quadtree, host_build, hidden=False) is not None


# ---- the course's code, the notebook's helpers -------------------------------------------------------

def test_course_code_passes_and_the_flat_version_is_right():
    for problem in ch21.PROBLEMS:
        assert verdict_text(problem, problem.reference_kernel(), hidden=False) is None
    cp = ch21.make_curves(np.random.default_rng(8), 9)
    flat = cuda.to_device(np.full((32 * 9, 2), np.nan, np.float32))
    ch21.tessellate_flat(cuda.to_device(cp), flat, 16)
    exp, mag = ch21.bezier_host(cp, np.full(9, 32))
    assert np.all(np.abs(flat.copy_to_host() - exp) <= ch21.bezier_tolerance(mag))
    x = np.array([0.1, 0.1, 0.1, 0.9], np.float32)
    y = np.array([0.1, 0.1, 0.6, 0.9], np.float32)
    assert ch21.course_quadtree_of(x, y, 1, 3).tolist() == [64, 64, 6, 7]


def test_pictures_texts_and_cpu_baselines():
    import matplotlib
    matplotlib.use("Agg")
    curves = ch21.sample_curves(5)
    ax = ch21.show_tessellation(curves)
    assert len(ax) == 2 and len(ax[0].get_lines()) == 15
    inputs = ch21.quadtree_inputs(np.random.default_rng(2), 120)
    leaf = ch21.quadtree_host(inputs["x"], inputs["y"], 3, 4)
    ax = ch21.show_quadtree(inputs["x"], inputs["y"], leaf)
    splits = {int(c) // 4 ** k for c in leaf for k in range(1, 5) if int(c) // 4 ** k >= 1}
    assert len(ax.patches) == 1 + 4 * len(splits)
    for which in ("bezier", "quadtree", "limits"):
        ch21.show_cuda(which)
    with pytest.raises(ValueError):
        ch21.show_cuda("bfs")
    saved = ch21.work_saved(curves)
    assert saved["flat_points"] == 160 and saved["adaptive_points"] == ch21.counts_of(curves).sum()
    rows = ch21.time_cpu(500)
    assert len(rows) == 2 and all(r["right"] and r["ms"] > 0 for r in rows), rows
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch21.measure()


def test_the_measuring_cell_runs_every_way_and_checks_each_result(monkeypatch, capsys):
    """The GPU measuring cell's launches, run once each in the simulator on 20 curves (its timer
    replaced by one call): every way tessellates (checked), a wrong one is marked wrong; the
    chart has every row; without the recorded run, the cell says so."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    rows = ch21.measure(_tessellate(u_over_count=True), _counts(), n=20, repeats=1)
    assert [r["right"] for r in rows] == [True, True, False, True], rows
    assert rows[0]["points"] == 640 and rows[1]["points"] == rows[2]["points"] < 640
    drawn = ch21.chart(rows)
    assert drawn["name"] == "ch21_measure" and len(drawn["rows"]) == 4
    assert ch21.chart() == {"name": "ch21_measure"}     # CPU mode draws the recorded run


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """Every course kernel of the chapter compiles for compute capability 9.0."""
    assert_compiles_for_h200("ch21", (
        "r.cuda, r.float32, r.int32 = cuda, numba.float32, numba.int32\n"
        "cp = types.float32[:, :, ::1]; i1 = types.int32[::1]; f1 = types.float32[::1]\n"
        "p2 = types.float32[:, ::1]; i64 = types.int64; f64 = types.float64\n"
        "b = r._bezier_kernels.__wrapped__(); q = r._quadtree_kernels.__wrapped__()\n"
        "sigs = [(b['counts'], (cp, i1)), (b['tessellate'], (cp, i1, i1, p2)),\n"
        "        (b['flat'], (cp, p2)), (q['root'], (i1,)), (q['clear'], (i1, i64)),\n"
        "        (q['count'], (i1, i64, i1)), (q['split'], (f1, f1, i1, i64, f64, i64, i1))]\n"),
        7)


def test_the_last_waves_counts_are_the_nodes_of_that_depth():
    inputs = ch21.quadtree_inputs(np.random.default_rng(6), 300)
    x, y, cap, depth = inputs["x"], inputs["y"], inputs["capacity"], inputs["max_depth"]
    assert depth == ch21.depth_for(300) and ch21.depth_for(20_000) in range(7, 11)
    table = ch21.last_wave_counts(x, y, cap, depth)
    before = ch21.quadtree_host(x, y, cap, depth - 1)       # where the last wave starts from
    first = 4 ** (depth - 1)
    assert table.size == first and table.sum() == np.sum(before >= first)
    for code in np.unique(before[before >= first])[:5]:
        assert table[code - first] == np.sum(before == code)
