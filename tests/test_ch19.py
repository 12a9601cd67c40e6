"""Chapter 19: do the N-body checks pass correct kernels written several ways (a float64
accumulator, a 1/(r·r²) form, the pair (i, i) skipped, one shared array of four columns) and
fail the classic bugs (the softening left out, the direction flipped, body i's mass for body
j's, an unguarded or unbounded last tile, a missing barrier) with a verdict that says what is
wrong? Is the float64 spec right (against a plain loop), is the tolerance the error bound of a
float32 sum of N terms (an error just past it fails, one inside passes), does the speed test's
sample agree with the whole spec, and does the measuring cell run every way?"""

import math

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import assert_judged, verdict_text

ch19 = ag.problems.ch19
CPU = not ag.backend.is_gpu
TILE_MAX = 256


# ---- the specs ---------------------------------------------------------------------------------------

def _loops(pos, mass, eps2):
    n = pos.shape[0]
    acc = np.zeros((n, 3))
    for i in range(n):
        for j in range(n):
            d = [float(pos[j, c]) - float(pos[i, c]) for c in range(3)]
            r2 = d[0] ** 2 + d[1] ** 2 + d[2] ** 2 + float(eps2)
            for c in range(3):
                acc[i, c] += float(mass[j]) * d[c] / r2 ** 1.5
    return acc


def test_spec_agrees_with_plain_loops_and_with_newtons_third_law():
    inputs = ch19.nbody_inputs(np.random.default_rng(1), 23)
    acc, mag = ch19.nbody_host(**inputs)
    assert np.allclose(acc, _loops(**inputs), rtol=1e-12, atol=1e-300)
    assert np.all(mag >= np.abs(acc))
    # Momentum is conserved: the mass-weighted accelerations add up to zero.
    total = (inputs["mass"][:, None].astype(np.float64) * acc).sum(axis=0)
    assert np.all(np.abs(total) <= 1e-10 * (inputs["mass"][:, None] * mag).sum(axis=0))
    three = ch19.three_bodies()
    # Body 0 is pulled towards +x by body 1 (2 / 1²) and body 2 (4 / 3²), softened slightly.
    assert three["acc"][0, 0] == pytest.approx(2 / 1.01 ** 1.5 + 4 * 3 / 9.01 ** 1.5)
    assert np.all(three["acc"][:, 1:] == 0)


def test_the_tolerance_is_the_bound_of_a_float32_sum():
    """The worst float32 order of each body's N terms passes; an error just past the bound
    fails, one just inside passes; one term left out fails."""
    problem = ch19.nbody_gather
    case = problem.cases()[0]
    expected, tol = problem.reference_values(case)
    pos, mass, eps2 = case.inputs["pos"], case.inputs["mass"], case.inputs["eps2"]
    n = pos.shape[0]
    worst = np.zeros((n, 3), np.float32)
    short = np.zeros((n, 3))
    for i in range(n):
        d = (pos - pos[i]).astype(np.float32)
        r2 = (d * d).sum(axis=1, dtype=np.float32) + eps2
        terms = d * (mass / (r2 * np.sqrt(r2)))[:, None]
        for c in range(3):
            acc = np.float32(0)
            for t in sorted(terms[:, c], key=abs):
                acc = np.float32(acc + t)
            worst[i, c] = acc
        short[i] = expected["acc"][i] - terms[(i + 1) % n]
    assert np.all(np.abs(worst - expected["acc"]) <= tol["acc"])
    assert np.any(np.abs(short - expected["acc"]) > tol["acc"])
    # Through the check's own judgement: one element moved to 0.9 and then 1.1 times its bound
    # (float32 rounding moves it by far less than 0.1 of the bound).
    from autograder.core.checks import Outcome
    for factor, passes in ((0.9, True), (1.1, False)):
        got = expected["acc"].astype(np.float32)
        got[n // 2, 1] = np.float32(expected["acc"][n // 2, 1] + factor * tol["acc"][n // 2, 1])
        verdict = problem.judge(case, Outcome(outputs={"acc": got}, guard_intact={"acc": True}))
        assert verdict.passed == passes, (factor, str(verdict))


def test_the_speed_sample_agrees_with_the_whole_spec():
    inputs = ch19.nbody_inputs(np.random.default_rng(4), 57)
    acc, mag = ch19.nbody_host(**inputs)
    idx = np.array([0, 1, 2, 5, 100, 170, acc.size - 1, 5])
    expected, tol = ch19.nbody_sample(inputs, idx)
    assert np.allclose(expected["acc"], acc.reshape(-1)[idx], rtol=1e-12, atol=0)
    assert np.allclose(tol["acc"], ch19.nbody_tolerance(mag.reshape(-1)[idx], 57), rtol=1e-12)


def test_the_compiled_spec_agrees_with_numpy(monkeypatch):
    """Large cases (a GPU's) are summed by compiled code, small ones by NumPy: the same sums."""
    from autograder.problems.ch19 import specs
    inputs = ch19.nbody_inputs(np.random.default_rng(5), 300)
    small = ch19.nbody_host(**inputs, bodies=[0, 7, 299])
    monkeypatch.setattr(specs, "COMPILED_FROM", 0)
    large = ch19.nbody_host(**inputs, bodies=[0, 7, 299])
    assert np.allclose(large[0], small[0], rtol=1e-12, atol=0)
    assert np.allclose(large[1], small[1], rtol=1e-12, atol=0)


def test_flops_and_bytes_are_what_the_notebook_says():
    assert ch19.nbody_flops(1000) == 20 * 10 ** 6 and ch19.FLOPS_PER_PAIR == 20
    assert ch19.nbody_bytes(1000) == 28_000
    b = ch19.bounds(1000, 64, 1e12, 1e11)
    assert b["gather"] == pytest.approx((16e6 + 24e3) / 1e11)
    assert b["tiled"] == pytest.approx(max(2e7 / 1e12, (16e3 * 16 + 24e3) / 1e11))


# ---- 19.2 the gather -----------------------------------------------------------------------------

def _gather(no_softening=False, flipped=False, own_mass=False, skip_self=False, f64=False,
            last_missed=False):
    """One thread per body: right with the defaults (and with skip_self or f64), else one bug."""
    @cuda.jit
    def kernel(pos, mass, eps2, acc):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        n = pos.shape[0]
        if i < n:
            ax = 0.0 if f64 else float32(0.0)
            ay = 0.0 if f64 else float32(0.0)
            az = 0.0 if f64 else float32(0.0)
            for j in range(n - 1 if last_missed else n):
                if skip_self and j == i:
                    continue
                sign = -1 if flipped else 1
                dx = sign * (pos[j, 0] - pos[i, 0])
                dy = sign * (pos[j, 1] - pos[i, 1])
                dz = sign * (pos[j, 2] - pos[i, 2])
                r2 = dx * dx + dy * dy + dz * dz
                if not no_softening:
                    r2 += eps2
                m = mass[i] if own_mass else mass[j]
                s = m / (r2 * math.sqrt(r2))
                ax += dx * s
                ay += dy * s
                az += dz * s
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az
    return kernel


@pytest.mark.parametrize("name,expected", [
    ("ok", None),
    ("skip_self", None),
    ("f64", None),
    ("no_softening", "eps2 is added inside the power"),
    ("flipped", "the difference points from body i to body j"),
    ("own_mass", "the mass is body j's"),
    ("last_missed", "every body counts"),
])
def test_gather_verdict(name, expected):
    flags = {} if name == "ok" else {name: True}
    assert_judged(ch19.nbody_gather, _gather(**flags), expected)


def test_gather_host_copy_is_caught():
    class HostStep:
        def __getitem__(self, launch):
            def run(pos, mass, eps2, acc):
                acc.copy_to_device(ch19.nbody_host(pos.copy_to_host(), mass.copy_to_host(),
                                                   eps2)[0].astype(np.float32))
            return run
    failure = verdict_text(ch19.nbody_gather, HostStep(), hidden=False)
    assert failure is not None and "host" in failure, failure


# ---- 19.3 the tiled gather -----------------------------------------------------------------------

def _tiled(first_barrier=True, second_barrier=True, guard_load=True, whole_tile=False):
    """Bodies through shared memory a block's width at a time: right with the defaults, else one
    bug."""
    @cuda.jit
    def kernel(pos, mass, eps2, acc):
        tile = cuda.shared.array((TILE_MAX, 4), float32)
        t = cuda.threadIdx.x
        w = cuda.blockDim.x
        i = cuda.blockIdx.x * w + t
        n = pos.shape[0]
        me = min(i, n - 1)
        xi, yi, zi = pos[me, 0], pos[me, 1], pos[me, 2]
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for start in range(0, n, w):
            j = start + t
            if j < n or not guard_load:
                tile[t, 0] = pos[j, 0]
                tile[t, 1] = pos[j, 1]
                tile[t, 2] = pos[j, 2]
                tile[t, 3] = mass[j]
            if first_barrier:
                cuda.syncthreads()
            count = w if whole_tile else min(w, n - start)
            for k in range(count):
                dx = tile[k, 0] - xi
                dy = tile[k, 1] - yi
                dz = tile[k, 2] - zi
                r2 = dx * dx + dy * dy + dz * dz + eps2
                inv = float32(1.0) / math.sqrt(r2)
                s = tile[k, 3] * inv * inv * inv
                ax += dx * s
                ay += dy * s
                az += dz * s
            if second_barrier:
                cuda.syncthreads()
        if i < n:
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az
    return kernel


@pytest.mark.parametrize("flags,expected", [
    ({}, None),            # a padded last tile is the bank's nbody_tiled/ok_massless_padding
    ({"second_barrier": False}, "race"),
    ({"first_barrier": False}, "race"),
    ({"guard_load": False}, "out of bounds"),
    ({"whole_tile": True}, "the last tile is partial"),
])
def test_tiled_verdict(flags, expected):
    if "barrier" in str(flags) and not CPU:
        pytest.skip("a shared-memory race may not show on a GPU; CPU mode's detector catches it")
    assert_judged(ch19.nbody_tiled, _tiled(**flags), expected)


# ---- 19.1 the bound ---------------------------------------------------------------------------------

def _bound_ok(n, block, peak_flops, bandwidth):
    flops = 20 * n * n
    gather, tiled = 16 * n * n + 24 * n, 16 * n * -(-n // block) + 24 * n
    return (flops, gather, tiled, max(flops / peak_flops, gather / bandwidth),
            max(flops / peak_flops, tiled / bandwidth))


def _bound_sum_of_times(n, block, peak_flops, bandwidth):
    flops, gather, tiled, _, _ = _bound_ok(n, block, peak_flops, bandwidth)
    return (flops, gather, tiled, flops / peak_flops + gather / bandwidth,
            flops / peak_flops + tiled / bandwidth)


def _bound_half_pairs(n, block, peak_flops, bandwidth):
    got = list(_bound_ok(n, block, peak_flops, bandwidth))
    got[0] = 10 * n * n                      # Newton's third law's count, not the gather's
    return tuple(got)


@pytest.mark.parametrize("fn,expected", [(_bound_ok, None),
                                         (_bound_sum_of_times, "gather_seconds"),
                                         (_bound_half_pairs, "flops")])
def test_bound_verdict(fn, expected):
    assert_judged(ch19.nbody_bound, fn, expected)


# ---- the course's kernels, the notebook's helpers -----------------------------------------------------

def test_course_kernels_pass_and_the_scatter_is_right():
    for problem in (ch19.nbody_gather, ch19.nbody_tiled):
        assert verdict_text(problem, problem.reference_kernel(), hidden=False) is None
    # The scatter (not graded): right within the same bound, with blocks of 32 over 45 bodies.
    inputs = ch19.nbody_inputs(np.random.default_rng(9), 45)
    acc = cuda.to_device(np.full((45, 3), np.nan, np.float32))
    ch19.scatter_step(cuda.to_device(inputs["pos"]), cuda.to_device(inputs["mass"]),
                      inputs["eps2"], acc, threads=32)
    exact, mag = ch19.nbody_host(**inputs)
    assert np.all(np.abs(acc.copy_to_host() - exact) <= ch19.nbody_tolerance(mag, 45))
    got, expected = ch19.try_kernel(ch19.reference_gather(), n=20, threads=8)
    assert np.allclose(got, expected, rtol=1e-5, atol=0)


def test_the_picture_and_the_cpu_baselines():
    import matplotlib
    matplotlib.use("Agg")
    ax = ch19.show_decompositions(6)
    assert len(ax) == 3 and ax[0].get_images()[0].get_array().shape == (6, 6)
    rows = ch19.time_cpu(300)
    assert len(rows) == 3 and all(r["right"] and r["ms"] > 0 for r in rows), rows
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch19.measure()


def test_the_measuring_cell_runs_every_way_and_checks_each_result(monkeypatch):
    """The GPU measuring cell's launches, run once each in the simulator on 40 bodies (its timer
    replaced by one call, the device's limits given): every way computes acc (checked), a wrong
    kernel is marked wrong, and each decomposition has its bound."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    from autograder.problems.ch19 import notebook
    monkeypatch.setattr(notebook, "SPEED_BLOCK", 32)       # two blocks of 40 bodies, one partial
    rows = ch19.measure({"mine": ("tiled", _tiled()), "flipped": ("gather", _gather(flipped=True))},
                        n=40, repeats=1, limits=(66.9e12, 4.27e12))
    labels = [r["label"] for r in rows]
    assert len(rows) == 6 and labels[-1].startswith("CPU: "), labels
    assert [r["right"] for r in rows] == [True, True, True, True, False, True], rows
    gather, tiled, scatter, mine, flipped, cpu = (r["bound_ms"] for r in rows)
    assert gather > tiled > 0 and scatter > 0 and cpu is None
    assert (mine, flipped) == (tiled, gather)
    with pytest.raises(ValueError, match="'gather' or 'tiled'"):
        ch19.measure({"x": ("scatter", _gather())}, n=4, repeats=1, limits=(1e12, 1e11))


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """Every course kernel of the chapter compiles for compute capability 9.0."""
    assert_compiles_for_h200("ch19", (
        "r.cuda, r.float32 = cuda, numba.float32\n"
        "f2 = types.float32[:, ::1]; f1 = types.float32[::1]; s = types.float32\n"
        "k = r._nbody_kernels.__wrapped__()\n"
        "sigs = [(k['gather'], (f2, f1, s, f2)), (k['tiled'], (f2, f1, s, f2)),\n"
        "        (k['scatter'], (f2, f1, s, f2)), (k['zero'], (f2,))]\n"), 4)
