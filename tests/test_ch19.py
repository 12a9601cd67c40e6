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

def _tiled(first_barrier=True, second_barrier=True, guard_load=True, whole_tile=False,
           massless_padding=False):
    """Bodies through shared memory a block's width at a time: right with the defaults (and with
    massless padding), else one bug."""
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
            elif massless_padding:
                tile[t, 0] = float32(0.0)
                tile[t, 1] = float32(0.0)
                tile[t, 2] = float32(0.0)
                tile[t, 3] = float32(0.0)
            if first_barrier:
                cuda.syncthreads()
            count = w if (whole_tile or massless_padding) else min(w, n - start)
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
    ({}, None),
    ({"massless_padding": True}, None),
    ({"second_barrier": False}, "race"),
    ({"first_barrier": False}, "race"),
    ({"guard_load": False}, "out of bounds"),
    ({"whole_tile": True}, "the last tile is partial"),
])
def test_tiled_verdict(flags, expected):
    if "barrier" in str(flags) and not CPU:
        pytest.skip("a shared-memory race may not show on a GPU; CPU mode's detector catches it")
    assert_judged(ch19.nbody_tiled, _tiled(**flags), expected)
