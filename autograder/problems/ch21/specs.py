"""Chapter 21's graded exercises: what PMPP builds with dynamic parallelism, built with launches
from the host (Numba CUDA has no launch from a kernel).

- 21.1 ``tess_counts``: per quadratic Bezier curve, the number of points it is drawn with, from its
  curvature (PMPP's formula: 16 points per unit of curvature, truncated, clamped to 4 .. 32), one
  thread per curve. ``cp`` float32 [n, 3, 2] (P0, P1, P2), ``counts`` int32 [n], exact.
- 21.2 ``tessellate``: the book's child launch replaced. A host function gets the curves and their
  counts, scans the counts into offsets (the course's scan), and launches one kernel with a block
  per curve that writes every curve's points one after the other: ``points`` float32 [Σ counts, 2],
  point k of curve i at offset(i) + k, ``B(u) = (1 − u)²·P0 + 2u(1 − u)·P1 + u²·P2``,
  ``u = k / (counts[i] − 1)``; judged against the float64 polynomial within the error bound of
  a float32 evaluation (:func:`bezier_tolerance`). The speed test's exercise.
- 21.3 ``quadtree``: a quadtree over points of [0, 1)² built by waves that the host launches: a
  node holding more than ``capacity`` points, above depth ``max_depth``, splits into four; the
  output is each point's leaf as a locational code (1 the root, ``4 · code + q`` child q, q = the
  next bit of x plus twice the next bit of y), int32 [n], exact; and ``table`` int32
  [4^(max_depth − 1)], the counters the learner is given, holding the last wave's counts. In CPU
  mode every access to both in a launch is race-checked (a count without atomics stops it).
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, U32
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch21.references import (MAX_POINTS, MIN_POINTS, POINTS_PER_CURVATURE,
                                                 reference_counts, reference_quadtree,
                                                 reference_tessellate)
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.inputs import cores

# Per coordinate, a float32 point may be this many units in the last place of
# |P0| + 2|P1| + |P2| from the exact polynomial (see bezier_tolerance).
PER_POINT = 32
# Curvatures whose count sits this close to a step (16·c within 10^-3 of an integer between 5 and
# 32) are drawn again: there a float32 curvature may round to either side, and both are right.
STEP_MARGIN = 1e-3
SPEED_N = 1_000_003                   # curves in the speed test
SPEED_POINTS = 12 * SPEED_N           # 12 points a curve on average (the flat version: 32)
SPEED_THREADS = 32                    # a block of 32 threads per curve: one pass over the points


# ---- the curves -----------------------------------------------------------------------------------

def curvature(cp) -> np.ndarray:
    """PMPP's curvature of each curve in float64: |P1 − (P0 + P2)/2| / |P2 − P0|."""
    p = np.asarray(cp, np.float64)
    mid = p[:, 1] - 0.5 * (p[:, 0] + p[:, 2])
    chord = p[:, 2] - p[:, 0]
    return np.hypot(mid[:, 0], mid[:, 1]) / np.hypot(chord[:, 0], chord[:, 1])


def counts_of(cp) -> np.ndarray:
    """The number of points of each curve (int64): floor(16 · curvature), clamped to 4 .. 32."""
    v = np.minimum(curvature(cp) * POINTS_PER_CURVATURE, float(MAX_POINTS))
    return np.clip(np.floor(v).astype(np.int64), MIN_POINTS, MAX_POINTS)


def _near_a_step(cp) -> np.ndarray:
    v = curvature(cp) * POINTS_PER_CURVATURE
    k = np.round(v)
    return (np.abs(v - k) < STEP_MARGIN) & (k > MIN_POINTS) & (k <= MAX_POINTS)


def make_curves(rng, n: int) -> np.ndarray:
    """``n`` curves of a random scale (10^-3 .. 10^3) and centre (within two scales of the
    origin), chords of 0.2 to 1.5 scales in any direction, P1 off the chord's midpoint by 0 to 2.4
    chords in any direction: counts from 4 (clamped) to 32 (clamped) and every step between, and
    none within 10^-3 of a step."""
    n = int(n)
    s = 10.0 ** rng.uniform(-3, 3)
    centre = rng.uniform(-2, 2, 2) * s

    def draw(m):
        p0 = centre + s * rng.uniform(-1, 1, (m, 2))
        length = s * rng.uniform(0.2, 1.5, m)
        a = rng.uniform(0, 2 * np.pi, m)
        p2 = p0 + length[:, None] * np.stack([np.cos(a), np.sin(a)], axis=1)
        c = rng.uniform(0, 2.4, m)
        b = rng.uniform(0, 2 * np.pi, m)
        p1 = 0.5 * (p0 + p2) + (c * length)[:, None] * np.stack([np.cos(b), np.sin(b)], axis=1)
        return np.stack([p0, p1, p2], axis=1).astype(np.float32)

    cp = draw(n)
    again = np.flatnonzero(_near_a_step(cp))
    for _ in range(100):             # only the curves drawn again are looked at again
        if again.size == 0:
            break
        cp[again] = draw(again.size)
        again = again[_near_a_step(cp[again])]
    return cp


# ---- 21.1 the counts ----------------------------------------------------------------------------

def _counts_inputs(rng, n):
    return {"cp": make_curves(rng, n)}


def _counts_spec(cp, **launch):
    return {"counts": counts_of(cp).astype(np.float64)}


def _exact(inputs, expected):
    return {k: np.zeros(np.shape(v)) for k, v in expected.items()}


def _counts_outputs(n):
    return {"counts": ((int(n),), np.int32)}


def _counts_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["cp"], outputs["counts"])


def _curve_label(n) -> str:
    return f"{n} curve{'s' * (n != 1)}"


COUNTS_HINT = ("counts[i] = min(max(int(16 · c), 4), 32) with c = |P1 − (P0 + P2)/2| / |P2 − P0| "
               "of curve i (cp[i, 0], cp[i, 1], cp[i, 2], each an (x, y) pair): the distance of "
               "P1 from the chord's midpoint over the chord's length; int() truncates; clamp "
               "to at least 4 and at most 32, and give every curve its own count.")

tess_counts = Problem(
    "tess_counts", title="Adaptive tessellation, step one: each curve's count of points",
    spec=_counts_spec, make_inputs=_counts_inputs, outputs=_counts_outputs, tolerance=_exact,
    launch=_counts_launch, block_sizes=(32, 64, 128), visible_block_size=32,
    # Visible: 37 curves (a partial second block), 19 (one partial block), 1. Hidden: 150 (four
    # times the largest visible one), 2 and two random counts; on a GPU 2^24 + 7 curves too.
    cpu_sizes=Sizes(visible=(37, 19, 1), hidden=(150, 2), hidden_random=(2, 3, 300)),
    gpu_sizes=Sizes(visible=(37, 19, 1), hidden=(150, 2, (1 << 24) + 7),
                    hidden_random=(2, 3, 100_000)),
    size_label=_curve_label, elementwise=True, reference=reference_counts,
    bytes_moved=lambda n: 28 * int(n), value_hint=COUNTS_HINT,
)


# ---- 21.2 the tessellation ------------------------------------------------------------------------

def total_of(size) -> int:
    """The number of points of a case of size (n, t): t when 4n ≤ t ≤ 32n, else a total spread
    over that range from t (random hidden sizes draw n and t alike)."""
    n, t = int(size[0]), int(size[1])
    if MIN_POINTS * n <= t <= MAX_POINTS * n:
        return t
    return MIN_POINTS * n + (t * 7919) % ((MAX_POINTS - MIN_POINTS) * n + 1)


def random_counts(rng, n: int, total: int) -> np.ndarray:
    """``n`` counts between 4 and 32 adding up to ``total``, spread at random, one of them 32
    where the total allows (so that every block size of the check meets a curve of 32 points)."""
    extra = np.zeros(n, np.int64)
    left = total - MIN_POINTS * n
    room = MAX_POINTS - MIN_POINTS
    if n and left >= room:
        extra[rng.integers(n)] = room
        left -= room
    while left > 0:
        open_ = np.flatnonzero(extra < room)
        if left < open_.size:
            # What the shares' rounding left over: one more point each to that many curves at
            # random (handing it out a point a pass took minutes for a million curves).
            extra[rng.choice(open_, left, replace=False)] += 1
            break
        w = rng.random(open_.size) * rng.exponential(1.0, open_.size)
        share = np.minimum(np.floor(w / w.sum() * left).astype(np.int64), room - extra[open_])
        if share.sum() == 0:
            share[rng.integers(open_.size)] = 1
        extra[open_] += share
        left -= int(share.sum())
    return (MIN_POINTS + extra).astype(np.int32)


def _tess_inputs(rng, size):
    n = int(size[0])
    return {"cp": make_curves(rng, n), "counts": random_counts(rng, n, total_of(size))}


def bezier_host(cp, counts, where=None) -> tuple[np.ndarray, np.ndarray]:
    """(points, |P0| + 2|P1| + |P2| per point and coordinate) in float64, every curve's points one
    after the other; ``where`` (point indices) for some of them only."""
    counts = np.asarray(counts, np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    idx = np.arange(offsets[-1]) if where is None else np.asarray(where, np.int64)
    curve = np.searchsorted(offsets, idx, side="right") - 1
    k = (idx - offsets[curve]).astype(np.float64)
    u = k / (counts[curve] - 1)
    w = 1.0 - u
    p = np.asarray(cp, np.float64)[curve]
    pts = (w * w)[:, None] * p[:, 0] + (2 * u * w)[:, None] * p[:, 1] + (u * u)[:, None] * p[:, 2]
    mag = np.abs(p[:, 0]) + 2 * np.abs(p[:, 1]) + np.abs(p[:, 2])
    return pts, mag


def bezier_tolerance(mag) -> np.ndarray:
    """|error| ≤ 32 u · (|P0| + 2|P1| + |P2|) per coordinate (u = 2^-24): u = k / (count − 1)
    rounded once moves the point by at most |B'(u)| · u·2^-24 ≤ 2 (|P0| + 2|P1| + |P2|) · 2^-24,
    and the weights and the sum of three products, in any of the usual forms (Bernstein weights,
    the power form, de Casteljau's lerps), a few tens of roundings of terms bounded by the
    same sum; plus the smallest normal float32 for points near zero."""
    return PER_POINT * U32 * mag + TINY32


def _tess_spec(cp, counts, **launch):
    return {"points": bezier_host(cp, counts)[0]}


def _tess_tolerance(inputs, expected):
    _, mag = bezier_host(inputs["cp"], inputs["counts"])
    return {"points": bezier_tolerance(mag)}


def bezier_sample(inputs, idx):
    """The points' expected values and tolerances at flat indices ``idx`` of [total, 2] only (the
    speed test's samples)."""
    idx = np.asarray(idx, np.int64)
    pts, mag = bezier_host(inputs["cp"], inputs["counts"], idx // 2)
    comp = idx % 2
    rows = np.arange(idx.size)
    return {"points": pts[rows, comp]}, {"points": bezier_tolerance(mag[rows, comp])}


def _tess_outputs(size):
    return {"points": ((total_of(size), 2), np.float32)}


def _tess_launch(tessellate, inputs, outputs, case):
    tessellate(inputs["cp"], inputs["counts"], outputs["points"], case.threads)


def _tess_label(size) -> str:
    n = int(size[0])
    return f"{n} curve{'s' * (n != 1)}, {total_of(size)} points"


def tessellate_bytes(size) -> int:
    """The least a tessellation moves: the curves and counts read, every point written once."""
    return 28 * int(size[0]) + 8 * total_of(size)


def speed_curves(rng, size) -> dict:
    return _tess_inputs(rng, size)


@njit_on_first_call
def _parallel_tessellation():
    import numba

    @numba.njit(parallel=True, cache=False)
    def tess(cp, counts, offsets, points):
        for i in numba.prange(cp.shape[0]):
            last = np.float32(counts[i] - 1)
            for k in range(counts[i]):
                u = np.float32(k) / last
                w = np.float32(1.0) - u
                b0, b1, b2 = w * w, np.float32(2.0) * u * w, u * u
                for c in range(2):
                    points[offsets[i] + k, c] = b0 * cp[i, 0, c] + b1 * cp[i, 1, c] + b2 * cp[i, 2, c]
    return tess


def _parallel_tessellate(cp, counts, points):
    offsets = np.zeros(cp.shape[0], np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    _parallel_tessellation(cp, counts, offsets, points)


def _numpy_tessellate(cp, counts, points):
    points[:] = bezier_host(cp, counts)[0]


BASELINES = {
    "parallel": Baseline(f"numba.njit, curves in parallel ({cores()} cores)", _parallel_tessellate),
    "numpy": Baseline("NumPy, every point's curve found by a search (1 core)", _numpy_tessellate,
                      at_speed_size=False),
}

TESS_HINT = ("point k of curve i goes to points[offset(i) + k], offset(i) the sum of the counts of "
             "the curves before i (an exclusive scan: the first curve starts at 0); its value is "
             "(1 − u)²·P0 + 2u(1 − u)·P1 + u²·P2 with u = k / (counts[i] − 1), so the first point "
             "is P0 and the last is P2; every one of a curve's counts[i] points is written, also "
             "when the curve has more points than the block has threads.")


TESS_NAN_HINT = ("points left NaN were never written: a block must write all counts[b] points of "
                 "its curve, looping over k = threadIdx.x, threadIdx.x + blockDim.x, ... while "
                 "k < counts[b] (a curve may have more points than the block has threads), at "
                 "offset(b) + k, offset(b) the exclusive scan of the counts.")


class TessellationProblem(Problem):
    """A block per curve, each writing up to 32 points: the simulator's work is the blocks'
    threads; the output's length depends on the case (its size is (curves, points))."""

    def judge(self, case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs=False)
        got = outcome.outputs.get("points")
        if not verdict.passed and "never written" in verdict.message and got is not None:
            verdict.hint = TESS_NAN_HINT
        if verdict.index is not None and show_inputs:
            p = int(verdict.index) // 2
            offsets = np.concatenate([[0], np.cumsum(case.inputs["counts"].astype(np.int64))])
            i = int(np.searchsorted(offsets, p, side="right") - 1)
            cp = case.inputs["cp"][i]
            verdict.message += (f"\n  that is point {p - offsets[i]} of curve {i} (its points start "
                                f"at {offsets[i]}; counts[{i}] = {case.inputs['counts'][i]}), "
                                f"coordinate {'xy'[int(verdict.index) % 2]}; its control points "
                                f"{cp[0].tolist()}, {cp[1].tolist()}, {cp[2].tolist()}")
        return verdict


tessellate = TessellationProblem(
    "tessellate",
    title="Adaptive tessellation: a scan of the counts, then a block per curve",
    spec=_tess_spec, make_inputs=_tess_inputs, outputs=_tess_outputs, tolerance=_tess_tolerance,
    launch=_tess_launch, block_sizes=(8, 16, 32), visible_block_size=16,
    blocks_for=lambda size, t: int(size[0]),
    # (curves, points). Visible: 37 curves of 600 points (a spread of counts), 19 of 76 (every
    # curve at the least, 4), 5 of 160 (every curve at the most, 32: more points than the 16
    # threads of a block), 1 of 9. Hidden: 150 curves of 2,500 points (four times the largest
    # visible), 2 of 40, and two random shapes; blocks of 8, 16 and 32 threads. On a GPU, a
    # million curves of 12 million points.
    cpu_sizes=Sizes(visible=((37, 600), (19, 76), (5, 160), (1, 9)),
                    hidden=((150, 2500), (2, 40)), hidden_random=(2, 1, 200)),
    gpu_sizes=Sizes(visible=((37, 600), (19, 76), (5, 160), (1, 9)),
                    hidden=((150, 2500), (2, 40), (SPEED_N, SPEED_POINTS)),
                    hidden_random=(2, 1, 100_000), speed=(SPEED_N, SPEED_POINTS)),
    size_label=_tess_label, reference=reference_tessellate, baselines=BASELINES,
    bytes_moved=tessellate_bytes, sample_spec=bezier_sample, speed_inputs=speed_curves,
    speed_launch=lambda size: (int(size[0]), SPEED_THREADS),
    # The reference is the same design (the course's scan, then a block of 32 per curve): a plain
    # block-per-curve kernel runs at its speed, and half of it leaves room for another mapping
    # (a thread per point with a search, a warp per curve) and for the spread between runs. The CPU
    # bar is the compiled loop on every core of the grading machine, a strong baseline for ~12
    # points a curve: on the H200 (judged in the grader, 2026-12-03) the reference took 1.50 ms,
    # the solution 2.12 ms (71%) and the loop on 16 cores about 10 ms, so the solution was 4.7×
    # the CPU. Twice the CPU's speed is the bar; half the reference's is the one that binds.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="parallel", min_speedup=2.0),
    value_hint=TESS_HINT, device_only=True,
)


# ---- 21.3 the quadtree ----------------------------------------------------------------------------

ONE_BELOW = np.nextafter(np.float32(1), np.float32(0))


def depth_for(n) -> int:
    """A case's max_depth, from its number of points (the table's length, an output, depends on
    it): 3 to 5 up to 10,000 points, 7 to 10 past them."""
    n = int(n)
    return 3 + n % 3 if n <= 10_000 else 7 + n % 4


def quadtree_inputs(rng, n) -> dict:
    """``n`` points of [0, 1)²: a third uniform, the rest in a few clusters of random widths
    (10^-3 .. 10^-1), with a run of identical points longer than ``capacity`` (a node that keeps
    splitting until ``max_depth``) once there are enough points. ``capacity`` 1 .. 8 on small cases, 4 ..
    32 past 10,000 points; ``max_depth`` from :func:`depth_for`."""
    n = int(n)
    big = n > 10_000
    capacity = int(rng.integers(4, 33) if big else rng.integers(1, 9))
    max_depth = depth_for(n)
    pts = rng.random((n, 2))
    clustered = rng.random(n) < 2 / 3
    k = int(rng.integers(2, 5))
    centres = rng.random((k, 2))
    widths = 10.0 ** rng.uniform(-3, -1, k)
    which = rng.integers(0, k, n)
    pts[clustered] = centres[which[clustered]] + widths[which[clustered], None] * \
        rng.standard_normal((int(clustered.sum()), 2))
    if n > 2 * capacity + 2:
        run = rng.choice(n, capacity + 2, replace=False)
        pts[run] = pts[run[0]]
    pts = np.clip(pts.astype(np.float32), np.float32(0), ONE_BELOW)
    if n > 4 * capacity + 4 and not big:
        # A group of exactly `capacity` identical points where, at some depth above max_depth,
        # they are alone in their node: a node holding capacity points must not split. Tried at
        # a few places (an empty corner of the square is found in a few tries).
        group = rng.choice(n, capacity, replace=False)
        for _ in range(40):
            pts[group] = rng.random(2).astype(np.float32)
            leaf = quadtree_host(pts[:, 0], pts[:, 1], capacity, max_depth)
            codes, sizes = np.unique(leaf, return_counts=True)
            if np.any((sizes == capacity) & (depth_of(codes) < max_depth)):
                break
    return {"x": np.ascontiguousarray(pts[:, 0]), "y": np.ascontiguousarray(pts[:, 1]),
            "capacity": capacity, "max_depth": max_depth}


def quadtree_host(x, y, capacity, max_depth) -> np.ndarray:
    """Every point's leaf (int64 locational codes), wave by wave as the kernels do it: at depth d
    the nodes' counts, then the points of every node with more than ``capacity`` moved into
    their child quadrant."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    leaf = np.ones(x.size, np.int64)
    for d in range(int(max_depth)):
        first = 4 ** d
        active = leaf >= first
        if not active.any():
            break
        table = np.bincount(leaf[active] - first, minlength=first)
        split = np.zeros(x.size, bool)
        split[active] = table[leaf[active] - first] > capacity
        scale = 2.0 ** (d + 1)
        q = (np.floor(x * scale).astype(np.int64) & 1) + 2 * (np.floor(y * scale).astype(np.int64) & 1)
        leaf[split] = 4 * leaf[split] + q[split]
    return leaf


def last_wave_counts(x, y, capacity, max_depth) -> np.ndarray:
    """The table after the last wave (d = max_depth − 1): the points of every node of that depth,
    4^(max_depth − 1) counters."""
    leaf = quadtree_host(x, y, capacity, max_depth - 1)
    first = 4 ** (int(max_depth) - 1)
    return np.bincount(leaf[leaf >= first] - first, minlength=first)


def depth_of(code) -> np.ndarray:
    """The depth of a locational code: (bit length − 1) / 2."""
    code = np.asarray(code, np.int64)
    return (np.floor(np.log2(np.maximum(code, 1))).astype(np.int64)) // 2


def cell_of(code) -> tuple[float, float, float]:
    """(x0, y0, side) of the square a locational code names."""
    code = int(code)
    d = (code.bit_length() - 1) // 2
    m = code - 4 ** d
    cx = cy = 0
    for bit in range(d):
        cx |= ((m >> (2 * bit)) & 1) << bit
        cy |= ((m >> (2 * bit + 1)) & 1) << bit
    side = 2.0 ** -d
    return cx * side, cy * side, side


def _quadtree_spec(x, y, capacity, max_depth, **launch):
    return {"leaf": quadtree_host(x, y, capacity, max_depth).astype(np.float64),
            "table": last_wave_counts(x, y, capacity, max_depth).astype(np.float64)}


def _quadtree_outputs(n):
    return {"leaf": ((int(n),), np.int32), "table": ((4 ** (depth_for(n) - 1),), np.int32)}


def _quadtree_launch(build, inputs, outputs, case):
    build(inputs["x"], inputs["y"], inputs["capacity"], inputs["max_depth"], outputs["leaf"],
          outputs["table"], case.threads)


def _quadtree_must_read(case):
    """x and y of the points whose root splits: a tree of one leaf needs no coordinate. (Only CPU
    mode's recorder reads it: a GPU's hidden case of 2^24 points is not built twice for it.)"""
    if case.inputs["x"] is None or case.inputs["x"].size > 100_000:
        return {}
    leaf = quadtree_host(case.inputs["x"], case.inputs["y"], case.inputs["capacity"],
                         case.inputs["max_depth"])
    return {"x": leaf > 1, "y": leaf > 1}


def _point_label(n) -> str:
    return f"{n} point{'s' * (n != 1)}"


QUADTREE_HINT = ("leaf[i] is point i's leaf: start every point at the root (code 1); at wave d "
                 "(d = 0 .. max_depth − 1) count the points of every node of depth d (their codes "
                 "are 4^d .. 2·4^d − 1: a table of 4^d counters, cleared before each wave), then "
                 "move every point of a node with MORE than capacity points to its child: "
                 "4·code + qx + 2·qy, qx = int(x · 2^(d+1)) & 1, qy the same of y. A node at "
                 "depth max_depth never splits. Every block's counts must be complete before "
                 "any point splits: two kernels (a barrier waits for its own block only).")


TABLE_HINT = ("table is the table of counters you are given: after the last wave (d = max_depth "
              "− 1) it holds the number of points of every node of that depth, table[code − 4^d] "
              "for the node `code` (cleared before the wave, then one atomic add per point still "
              "at that depth). A plain `table[j] += 1` loses the additions of threads that read "
              "the same counter at the same time: use cuda.atomic.add.")


TWO_KERNELS_HINT = ("a thread read a counter while a thread of another block was still adding "
                    "to it: the blocks of one launch run in no particular order, and a barrier "
                    "waits only for the threads of its own block. Count in one kernel and split "
                    "in the next: a launch ends only when all its blocks have finished.")


class QuadtreeProblem(Problem):
    """The host's waves: every point is visited twice per wave, max_depth waves."""

    def simulated_threads(self, case) -> float:
        return case.thread_count * 2 * int(case.inputs.get("max_depth") or 10) + 4 ** 5

    def judge(self, case, outcome, show_inputs: bool = True):
        verdict = super().judge(case, outcome, show_inputs=False)
        if not verdict.passed and "`table`" in verdict.message:
            verdict.hint = (TWO_KERNELS_HINT if "race" in verdict.message and "(atomically)"
                            in verdict.message else TABLE_HINT)
        elif verdict.index is not None and show_inputs:
            i = int(verdict.index)
            x, y = case.inputs["x"][i], case.inputs["y"][i]
            verdict.message += (f"\n  point {i} at ({float(x)!r}, {float(y)!r}); capacity = "
                                f"{case.inputs['capacity']}, max_depth = "
                                f"{case.inputs['max_depth']}")
        return verdict


quadtree = QuadtreeProblem(
    "quadtree", title="A quadtree built by waves the host launches",
    spec=_quadtree_spec, make_inputs=quadtree_inputs, outputs=_quadtree_outputs,
    tolerance=_exact, launch=_quadtree_launch, block_sizes=(32, 64, 128), visible_block_size=32,
    # Visible: 38 points (5 levels at most), 100 (4), 1 (a tree of one leaf). Hidden: 400 (four
    # times the largest visible), 2, and two random counts; on a GPU 2^24 + 3 points too (10).
    cpu_sizes=Sizes(visible=(38, 100, 1), hidden=(400, 2), hidden_random=(2, 3, 300)),
    gpu_sizes=Sizes(visible=(38, 100, 1), hidden=(400, 2, (1 << 24) + 3),
                    hidden_random=(2, 20_000, 300_000)),
    size_label=_point_label, reference=reference_quadtree, must_read=_quadtree_must_read,
    bytes_moved=lambda n: 12 * int(n), value_hint=QUADTREE_HINT, device_only=True,
    # CPU mode: every access to leaf and table in a launch race-checked (a count without atomics
    # stops the launch, naming the threads).
    race_check_outputs=True,
)
