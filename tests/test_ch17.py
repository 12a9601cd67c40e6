"""Chapter 17: do the F^H·d checks pass correct kernels written several ways (a float64
accumulator, the samples in shared memory, fast trigonometry where its bound allows it) and fail
the classic bugs (the exponent's sign, the 2π, the outputs swapped, a guard on the samples, a
missing barrier, a dropped chunk tail) with a verdict that names them? Is the float64 spec right
(against plain loops), is the tolerance the derived error bound (an error just under it passes,
just over it fails; fast trigonometry's errors fail the accurate bound and pass the fast one),
does the speed test's sample agree with the whole spec, and do the notebook's helpers (the
scatter with and without atomics, one kernel per constant-memory chunk, the measuring cell, the
compiled code of fast sin and cos) do what the notebook says?"""

import math

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag
from autograder.core.checks import Outcome, gamma

from ptx import assert_compiles_for_h200
from verdicts import assert_judged, verdict_text

ch17 = ag.problems.ch17
CPU = not ag.backend.is_gpu
TWO_PI = np.float32(2 * math.pi)
NAMES = ("kx", "ky", "kz", "x", "y", "z", "rMu", "iMu")


# ---- the spec and its bound -------------------------------------------------------------------------

def _loops(s):
    re, im = np.zeros(s["x"].size), np.zeros(s["x"].size)
    for n in range(s["x"].size):
        for m in range(s["kx"].size):
            t = 2 * math.pi * (float(s["kx"][m]) * float(s["x"][n]) + float(s["ky"][m]) * float(s["y"][n])
                               + float(s["kz"][m]) * float(s["z"][n]))
            mu = complex(float(s["rMu"][m]), float(s["iMu"][m])) * complex(math.cos(t), math.sin(t))
            re[n] += mu.real
            im[n] += mu.imag
    return re, im


def test_the_spec_agrees_with_plain_loops_and_the_bound_with_its_definition():
    s = ch17.scan_inputs(np.random.default_rng(3), (9, 13))
    re, im = ch17.fhd_host(**s)
    lre, lim = _loops(s)
    assert np.allclose(re, lre, rtol=1e-12, atol=1e-9) and np.allclose(im, lim, rtol=1e-12, atol=1e-9)
    # The bound, term by term: Σ w·(a + (b + γ_5)·A) + γ_(M+2)·Σ w.
    a, b = ch17.TRIG_FAST
    w = np.abs(s["rMu"].astype(np.float64)) + np.abs(s["iMu"].astype(np.float64))
    A = 2 * np.pi * sum(np.abs(np.outer(s[v].astype(np.float64), s[k].astype(np.float64)))
                        for v, k in (("x", "kx"), ("y", "ky"), ("z", "kz")))
    direct = (w * (a + (b + gamma(5)) * A)).sum(axis=1) + gamma(13 + 2) * w.sum()
    assert np.allclose(ch17.fhd_bound(**s, trig=ch17.TRIG_FAST), direct, rtol=1e-12)
    # Exercise 17.2's answer bounds the per-sample bound from above.
    course = ch17.fhd_error_bound.spec(13, w.sum(), A.max(), a, b)["bound"]
    assert np.all(direct <= course)


def _judge(problem, case, re, im):
    return problem.judge(case, Outcome(outputs={"rFhD": np.asarray(re, np.float32),
                                                "iFhD": np.asarray(im, np.float32)},
                                       guard_intact={"rFhD": True, "iFhD": True}))


def test_the_tolerance_is_the_bound_just_under_passes_just_over_fails():
    case = ch17.fhd_gather.cases()[0]
    expected, tol = ch17.fhd_gather.reference_values(case)
    re, im = expected["rFhD"], expected["iFhD"]
    # float32 rounding of the answer itself is far inside the bound: nudge by 0.9 of the room
    # left after it, then by 1.1 of the bound at one voxel.
    assert _judge(ch17.fhd_gather, case, re + 0.9 * tol["rFhD"] * 0.999, im).passed
    over = re.copy()
    over[7] += 1.1 * tol["rFhD"][7]
    verdict = _judge(ch17.fhd_gather, case, over, im)
    assert not verdict.passed and "rFhD`[7]" in verdict.message, verdict.message


def _emulate(s, trig_error=0.0, slope=0.0):
    """A float32 kernel emulated in NumPy: θ in float32, float32 cos and sin (plus ``trig_error
    + slope·|θ|``, signed to push every term the same way), summed in float32 in order."""
    k = [s[n].astype(np.float32) for n in ("kx", "ky", "kz")]
    v = [s[n].astype(np.float32) for n in ("x", "y", "z")]
    theta = np.float32(TWO_PI) * (np.outer(v[0], k[0]) + np.outer(v[1], k[1]) + np.outer(v[2], k[2]))
    e = np.float32(trig_error) + np.float32(slope) * np.abs(theta)
    c = np.cos(theta) + e * np.sign(s["rMu"])
    sn = np.sin(theta) - e * np.sign(s["iMu"])
    terms = s["rMu"] * c - s["iMu"] * sn
    re = np.cumsum(terms, axis=1, dtype=np.float32)[:, -1]
    im = np.cumsum(s["iMu"] * np.cos(theta) + s["rMu"] * np.sin(theta), axis=1, dtype=np.float32)[:, -1]
    return re, im


def test_trigonometry_errors_inside_their_model_pass_and_beyond_it_fail():
    gather_case = ch17.fhd_gather.cases()[0]
    chunk_case = ch17.fhd_chunked.cases()[0]
    for case in (gather_case, chunk_case):
        assert _judge(ch17.fhd_gather, case, *_emulate(case.inputs)).passed
    # libdevice-sized errors (90% of 2^-22, every term pushed the same way) pass 17.1's bound.
    a, b = ch17.TRIG_PLAIN
    assert _judge(ch17.fhd_gather, gather_case, *_emulate(gather_case.inputs, 0.9 * a)).passed
    # Errors at 90% of the fast model pass 17.3's bound; four times the model fails.
    a, b = ch17.TRIG_FAST
    assert _judge(ch17.fhd_chunked, chunk_case, *_emulate(chunk_case.inputs, 0.9 * a, 0.9 * b)).passed
    assert not _judge(ch17.fhd_chunked, chunk_case, *_emulate(chunk_case.inputs, 4 * a, 4 * b)).passed
    # The fast bound is the wider one at every voxel (but not by much: θ's own float32 error,
    # γ_5 per radian, is already as large as the fast sine's b).
    plain = ch17.fhd_bound(**chunk_case.inputs, trig=ch17.TRIG_PLAIN)
    fast = ch17.fhd_bound(**chunk_case.inputs, trig=ch17.TRIG_FAST)
    assert np.all(fast > plain) and np.all(fast < 3 * plain)


def test_the_speed_sample_agrees_with_the_whole_spec():
    s = ch17.scan_inputs(np.random.default_rng(5), (300, 70))
    re, im = ch17.fhd_host(**s)
    idx = np.array([0, 17, 150, 299])
    expected, tol = ch17.fhd_gather.sample_spec(s, idx)
    assert np.allclose(expected["rFhD"], re[idx], rtol=1e-12, atol=1e-9)
    assert np.allclose(expected["iFhD"], im[idx], rtol=1e-12, atol=1e-9)
    assert np.allclose(tol["rFhD"], ch17.fhd_bound(**s)[idx], rtol=1e-12)
    _, fast = ch17.fhd_chunked.sample_spec(s, idx)
    assert np.all(fast["rFhD"] > tol["rFhD"])


# ---- 17.1 the gather ------------------------------------------------------------------------------

def _gather(sign=1, two_pi=True, swap=False, guard_samples=False):
    """One thread per voxel: right with the defaults, else with one classic slip."""
    @cuda.jit
    def kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        n = cuda.grid(1)
        if n < (kx.size if guard_samples else x.size):
            re = float32(0.0)
            im = float32(0.0)
            for m in range(kx.size):
                d = kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n]
                t = TWO_PI * d if two_pi else d
                c, s = math.cos(t), sign * math.sin(t)
                re += rMu[m] * c - iMu[m] * s
                im += iMu[m] * c + rMu[m] * s
            rFhD[n] = im if swap else re
            iFhD[n] = re if swap else im
    return kernel


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _gather(), None),
    ("sign", _gather(sign=-1), "the sign of the exponent is flipped"),
    ("two_pi", _gather(two_pi=False), "the 2π is missing"),
    ("swapped", _gather(swap=True), "outputs are swapped"),
    ("guard_on_samples", _gather(guard_samples=True), "never written"),
])
def test_gather_verdict(name, fn, expected):
    assert_judged(ch17.fhd_gather, fn, expected, hidden=name == "ok")


def test_a_host_computed_answer_is_caught():
    class HostFhd:
        def __getitem__(self, launch):
            def run(*arrays):
                host = {k: a.copy_to_host() for k, a in zip(NAMES, arrays)}
                re, im = ch17.fhd_host(**host)
                arrays[8].copy_to_device(re.astype(np.float32))
                arrays[9].copy_to_device(im.astype(np.float32))
            return run
    failure = verdict_text(ch17.fhd_gather, HostFhd(), hidden=False)
    assert failure is not None and "host" in failure, failure


# ---- 17.3 the chunked kernel --------------------------------------------------------------------------

CHUNK = 64


def _chunked(first_barrier=True, tail=True):
    @cuda.jit(fastmath=True)
    def kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        sh = cuda.shared.array((5, CHUNK), float32)
        n = cuda.grid(1)
        inside = n < x.size
        xn = x[n] if inside else float32(0.0)
        yn = y[n] if inside else float32(0.0)
        zn = z[n] if inside else float32(0.0)
        re = float32(0.0)
        im = float32(0.0)
        M = kx.size
        for base in range(0, M if tail else M - CHUNK + 1, CHUNK):
            for j in range(cuda.threadIdx.x, CHUNK, cuda.blockDim.x):
                if base + j < M:
                    sh[0, j], sh[1, j], sh[2, j] = kx[base + j], ky[base + j], kz[base + j]
                    sh[3, j], sh[4, j] = rMu[base + j], iMu[base + j]
            if first_barrier:
                cuda.syncthreads()
            for j in range(min(CHUNK, M - base)):
                t = TWO_PI * (sh[0, j] * xn + sh[1, j] * yn + sh[2, j] * zn)
                c, s = math.cos(t), math.sin(t)
                re += sh[3, j] * c - sh[4, j] * s
                im += sh[4, j] * c + sh[3, j] * s
            cuda.syncthreads()
        if inside:
            rFhD[n] = re
            iFhD[n] = im
    return kernel


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _chunked(), None),
    ("no_barrier", _chunked(first_barrier=False), "race"),
    ("tail_dropped", _chunked(tail=False), "last chunk is partial"),
])
def test_chunked_verdict(name, fn, expected):
    if name == "no_barrier" and not CPU:
        pytest.skip("a shared-memory race may not show on a GPU; CPU mode's detector catches it")
    assert_judged(ch17.fhd_chunked, fn, expected, hidden=name == "ok")


# ---- 17.2 the bound -----------------------------------------------------------------------------------

def _bound_ok(m, mu_sum, theta_max, a, b):
    u = 2.0 ** -24
    return mu_sum * (a + b * theta_max + 5 * u / (1 - 5 * u) * theta_max) + (m + 2) * u / (1 - (m + 2) * u) * mu_sum


def _bound_sum_of_m(m, mu_sum, theta_max, a, b):
    u = 2.0 ** -24                    # γ_m: the terms' own two roundings left out
    return mu_sum * (a + b * theta_max + 5 * u / (1 - 5 * u) * theta_max) + m * u / (1 - m * u) * mu_sum


@pytest.mark.parametrize("fn,expected", [(_bound_ok, None), (_bound_sum_of_m, "bound")])
def test_bound_verdict(fn, expected):
    assert_judged(ch17.fhd_error_bound, fn, expected)


# ---- the course's kernels and the notebook's helpers ---------------------------------------------------

def test_course_kernels_pass_and_the_scatter_needs_its_atomics():
    assert verdict_text(ch17.fhd_gather, ch17.reference_fhd_gather(), hidden=False) is None
    assert verdict_text(ch17.fhd_chunked, ch17.reference_fhd_chunked(), hidden=False) is None
    assert verdict_text(ch17.fhd_chunked, ch17.reference_fhd_gather_fast(), hidden=False) is None
    scan = ch17.small_scan()
    assert ch17.within_bound(ch17.run_fhd(ch17.reference_fhd_scatter(), scan, per="sample"), scan)

    @cuda.jit
    def scatter_plain(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
        m = cuda.grid(1)
        if m < kx.size:
            for n in range(x.size):
                t = TWO_PI * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n])
                rFhD[n] += rMu[m] * math.cos(t) - iMu[m] * math.sin(t)
                iFhD[n] += iMu[m] * math.cos(t) + rMu[m] * math.sin(t)
    if CPU:
        from autograder.machine.simulator.races import GlobalMemoryRace
        with pytest.raises(GlobalMemoryRace, match="voxels' sums"):
            ch17.run_fhd(scatter_plain, scan, per="sample", threads=32)
    with pytest.raises(ValueError, match="'voxel' or 'sample'"):
        ch17.run_fhd(scatter_plain, scan, per="block")


def test_one_kernel_per_constant_chunk_gives_f_hd():
    scan = ch17.small_scan(12, 8)
    built = ch17.fhd_by_constant_chunks(scan, chunk=3, threads=32)
    assert len(built["kernels"]) == 3
    got = (built["rFhD"].copy_to_host(), built["iFhD"].copy_to_host())
    assert ch17.within_bound(got, scan)


def test_the_cpu_baselines():
    rows = ch17.time_cpu_fhd((64, 16))
    assert len(rows) == 2 and all(r["right"] and r["ms"] > 0 for r in rows), rows
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch17.measure()


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200_with_the_sine_it_should():
    """Every course kernel compiles for compute capability 9.0; those compiled with fastmath use
    sin.approx.f32 and the accurate one does not; and a chunk of samples compiled into a kernel
    (cuda.const.array_like of a captured array) sits in the PTX's constant bank (.const ... =
    {...}), read with ld.const.f32 (a chunk of 512: one of a few samples is unrolled and folded
    into the instructions)."""
    assert_compiles_for_h200("ch17", (
        "r.cuda, r.float32 = cuda, numba.float32\n"
        "f = types.float32[::1]\n"
        "k = r._fhd_kernels.__wrapped__()\n"
        "for name, fast in (('gather', False), ('gather_fast', True), ('chunked', True)):\n"
        "    ptx, _ = cuda.compile_ptx(k[name].py_func, (f,) * 10, cc=(9, 0), fastmath=fast)\n"
        "    assert ('sin.approx.ftz.f32' in ptx) == fast, name\n"
        "from autograder.problems.ch17 import notebook as nb\n"
        "c = nb.const_chunk_kernel(np.arange(2560, dtype=np.float32).reshape(5, 512))\n"
        "ptx, _ = cuda.compile_ptx(c.py_func, (f,) * 5, cc=(9, 0))\n"
        "assert '_cudapy_cmem[10240]' in ptx and 'ld.const.f32' in ptx, ptx[-3000:]\n"
        "import numpy as np\n"
        "sigs = [(k[name], (f,) * 10) for name in ('scatter', 'gather', 'gather_fast', 'chunked')]\n"
        ).replace("c = nb.const", "import numpy as np\nc = nb.const"), 4)


@pytest.mark.skipif(not CPU, reason="the compiled code is read in CPU mode (no GPU needed)")
def test_fastmath_compiles_sin_and_cos_to_the_hardware_approximation():
    """The notebook's evidence, through the code viewer: sin.approx.f32 in the fast kernel's PTX,
    and in its SASS a multiplication by 1/(2π) rounded toward zero before MUFU.SIN (what the
    bound's b models)."""
    from autograder.learner.visual import code
    found = code.find_toolkit()
    if not (found.get("nvvm") and found.get("nvrtc")):
        pytest.skip("the CUDA toolkit wheels are not installed")
    fast = ch17.trig_code(ch17.reference_fhd_gather_fast(), code.compile_kernel)
    assert any("sin.approx" in line for line in fast["ptx_approx"]), fast
    if found.get("nvdisasm"):
        assert any(line.startswith("FMUL.RZ") and "0.159154" in line for line in fast["sass_trig"])
        assert any(line.startswith("MUFU.SIN") for line in fast["sass_trig"]), fast


def test_the_measuring_cell_runs_every_way_and_checks_each_result(monkeypatch):
    """The GPU measuring cell's launches, run once each in the simulator on a small scan (its
    timer replaced by one call): every way computes F^H·d within its bound; a wrong kernel is
    marked wrong."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    rows = ch17.measure({"mine": (_gather(), False), "flipped": (_gather(sign=-1), False)},
                        size=(40, 24), repeats=1, scatter_fraction=4, chunk=10)
    assert [r["right"] for r in rows] == [True] * 4 + [True, False, True], rows
    assert "3 kernels compiled" in rows[-1]["note"]


def test_the_fast_sine_error_cell_runs_and_checks_against_its_bound(monkeypatch):
    """trig_errors, run once in the simulator (which computes sin and cos in float64, so every
    kernel is far inside its bound there); in CPU mode without the patch it needs a GPU."""
    from autograder.machine import timing
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch17.trig_errors()
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    rows = ch17.trig_errors(extents=(4.0, 200.0), size=(40, 16), voxels=8,
                            kernels={"flipped": _gather(sign=-1)})
    assert [r["label"] for r in rows[:3]] == ["libdevice sin/cos", "fastmath=True", "flipped"]
    assert all(r["bound_used"] < 1 for r in rows if r["label"] != "flipped"), rows
    assert all(r["bound_used"] > 1 for r in rows if r["label"] == "flipped"), rows
    assert rows[3]["theta_max"] > 40 * rows[0]["theta_max"]


def test_the_h200s_fast_sine_errors_shipped_for_cpu_mode_stay_within_their_bounds():
    """What CPU mode prints for the fast sine's error is the course's H200 run of ``trig_errors``:
    both kinds of sine at every extent, each within its bound, and the fast one the larger error
    at the largest arguments (what the cell asks the learner to predict)."""
    kept = ag.experiments.recorded(ch17.TRIG)
    assert "H200" in kept["device"] and kept["versions"]["numba-cuda"]
    rows = kept["rows"]
    assert {r["label"] for r in rows} == {"libdevice sin/cos", "fastmath=True"}
    assert len({r["extent"] for r in rows}) == 3 and all(0 < r["bound_used"] <= 1 for r in rows)
    widest = max(r["extent"] for r in rows)
    fast, exact = (next(r["error"] for r in rows if r["extent"] == widest and r["label"] == label)
                   for label in ("fastmath=True", "libdevice sin/cos"))
    assert fast > exact
