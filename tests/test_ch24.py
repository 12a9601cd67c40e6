"""Chapter 24: is the float64 softmax right (against a plain loop, masked entries 0, a fully
masked row 0), do the inputs hold what the checks promise (offsets past exp's float32 range, every
kind of mask), is the tolerance the error bound of a float32 online softmax (the worst float32
orders stay inside it, a wrong rescaling factor, a dropped column or a missing merge level far
outside), does 24.3's answer bound the checks' tolerance, do 24.2's hidden cases run at warp sizes
32 and 64 with every block size, does the speed test's sample agree with the whole spec, and does
the measuring cell say what it lacks without a GPU?"""

import math

import numpy as np
import pytest

import autograder as ag
from numba import cuda, float32

from ptx import assert_compiles_for_h200

ch24 = ag.problems.ch24
CPU = not ag.backend.is_gpu
F = np.float32


# ---- the spec and the inputs ---------------------------------------------------------------------

def _loop_softmax(x):
    y = np.zeros(x.shape)
    for r, row in enumerate(np.asarray(x, np.float64)):
        m = max(row)
        if m == -math.inf:
            continue
        e = [math.exp(v - m) for v in row]
        y[r] = np.array(e) / sum(e)
    return y


def test_spec_agrees_with_a_plain_loop_and_follows_the_mask_rule():
    x = ch24.make_rows(np.random.default_rng(3), 9, 17)
    y = ch24.softmax_host(x)
    assert np.allclose(y, _loop_softmax(x), rtol=1e-13, atol=0)
    assert np.all(y[np.isneginf(x)] == 0.0)
    assert np.all(y[3] == 0.0) and np.all(np.isneginf(x[3]))          # the fully masked row
    live = ~np.all(np.isneginf(x), axis=1)
    assert np.allclose(y[live].sum(axis=1), 1.0, rtol=1e-13)
    big = ch24.softmax_host(np.array([[1e4, 1e4 - 1]], F))
    assert big[0, 0] == pytest.approx(1 / (1 + math.e ** -1))


def test_inputs_overflow_exp_and_hold_every_kind_of_mask():
    x = ch24.make_rows(np.random.default_rng(5), 10, 40)
    assert np.max(x[0]) > 100 and np.max(np.abs(x[np.isfinite(x)])) <= 1.1e4
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(x[0])).any()                       # no maximum: overflow
    assert np.isneginf(x[1, 0]) and np.isfinite(x[1, -1])          # a prefix of −inf
    assert np.isneginf(x[3]).all()                                 # a fully masked row
    assert np.isneginf(x[4, -1]) and np.isfinite(x[4, 0])          # a suffix (causal)
    assert 0 < np.isneginf(x[2]).sum() < 40                        # scattered
    assert np.array_equal(x, ch24.make_rows(np.random.default_rng(5), 10, 40), equal_nan=True)


def test_online_pairs_and_the_merge_rule_give_the_row_sum():
    row = np.array([2.0, -np.inf, 1.0, 5.0, 3.0, 7.0])
    last = ch24.online_steps(row)[-1]
    assert last["m"] == 7.0 and last["d"] == pytest.approx(np.exp(row - 7).sum(), rel=1e-14)
    a, b = ch24.online_steps(row[:3])[-1], ch24.online_steps(row[3:])[-1]
    assert ch24.merge((a["m"], a["d"]), (b["m"], b["d"]))[1] == pytest.approx(last["d"], rel=1e-14)
    assert ch24.merge((-np.inf, 0.0), (-np.inf, 0.0)) == (-np.inf, 0.0)


# ---- the tolerance is the bound -----------------------------------------------------------------

def _exp32(v, bias):
    """float32 exp, pushed ``bias`` ulp away from the correctly rounded value (CUDA's expf is
    within 2 ulp)."""
    e = np.float32(np.exp(np.float64(v)))
    for _ in range(abs(bias)):
        e = np.nextafter(e, F(np.inf) if bias > 0 else F(0))
    return e


def _online32(row, bias=0, rescale_bug=False, order=None, lanes=1):
    """An online softmax in float32: ``lanes`` lanes fold strided columns, then merge in a tree;
    ``bias`` ulp on every exp (the worst direction for d: all up)."""
    row = np.asarray(row, F)
    idx = np.arange(row.size) if order is None else order
    pairs = []
    for lane in range(lanes):
        m, d = F(-np.inf), F(0)
        for j in idx[lane::lanes]:
            v = row[j]
            if v > m:
                f = _exp32(F(m - v) if not rescale_bug else F(v - m), bias) if m > -np.inf else F(0)
                d = F(F(d * f) + F(1))
                m = v
            elif v > -np.inf:
                d = F(d + _exp32(F(v - m), bias))
        pairs.append((m, d))
    while len(pairs) > 1:
        merged = []
        for (m1, d1), (m2, d2) in zip(pairs[::2], pairs[1::2]):
            big = max(m1, m2)
            if big > -np.inf:
                d1 = F(F(d1 * _exp32(F(m1 - big), bias)) + F(d2 * _exp32(F(m2 - big), bias)))
            merged.append((big, d1))
        pairs = merged
    m, d = pairs[0]
    if d == 0:
        return np.zeros(row.size, F)
    return np.array([F(_exp32(F(v - m), -bias) / d) for v in row], F)


def _relative_excess(x, got, chain):
    tol = ch24.softmax_tolerance(x, chain)
    return float(np.max(np.abs(got.astype(np.float64) - ch24.softmax_host(x)) / tol))


def test_worst_float32_orders_stay_inside_the_bound_and_bugs_fall_far_outside():
    rng = np.random.default_rng(24)
    x = ch24.make_rows(rng, 6, 300)
    x[5] = np.sort(rng.standard_normal(300).astype(F) * 30)       # the maximum rises every step
    for bias in (2, -2):
        one = np.array([_online32(r, bias) for r in x])
        assert _relative_excess(x, one, ch24.rows_chain(300)) <= 1.0
        warp = np.array([_online32(r, bias, lanes=32) for r in x])
        assert _relative_excess(x, warp, ch24.warp_chain(300, 32)) <= 1.0
    # Bugs: the rescaling factor inverted, the last column dropped, one merge level missing.
    with np.errstate(over="ignore", invalid="ignore"):
        bad = np.array([_online32(r, rescale_bug=True) for r in x[[0, 5]]])
    assert _relative_excess(x[[0, 5]], bad, 300) > 1e3
    short = np.array([_online32(np.append(r[:-1], F(-np.inf))) for r in x[[0, 5]]])
    short[:, -1] = 0
    assert _relative_excess(x[[0, 5]], short, 300) > 50
    halves = np.array([np.concatenate([_online32(r[:150]) * 0.5, _online32(r[150:]) * 0.5])
                       for r in x[[5]]])
    assert _relative_excess(x[[5]], halves, ch24.warp_chain(300, 32)) > 50


def test_the_bound_of_24_3_covers_the_checks_tolerance():
    """24.3's y_bound for the row's largest spread is what the tolerance allows each output,
    relatively (up to the float64 and underflow terms)."""
    from autograder.problems.ch24.specs import _bound_spec
    x = np.random.default_rng(7).standard_normal((1, 2048)).astype(F)
    y = ch24.softmax_host(x)
    chain = ch24.warp_chain(2048, 32)
    spread = float(x.max() - x.min())
    bound = float(_bound_spec(chain, 2.0, spread)["y_bound"])
    tol = ch24.softmax_tolerance(x, chain)
    assert np.all(tol <= y * bound * (1 + 1e-9) + 16 * 2.0 ** -53 * y + 1.2e-38)
    # The spread of the row's largest value is 0: its tolerance is the bound at spread 0 and
    # the row's own sum (close to it: most terms have small spreads).
    top = int(np.argmax(x))
    assert tol[0, top] / y[0, top] >= float(_bound_spec(chain, 2.0, 0.0)["y_bound"]) * 0.99 - 1


# ---- the cases ---------------------------------------------------------------------------------

@pytest.mark.skipif(not CPU, reason="CPU mode runs the hidden cases at two warp sizes")
def test_warp_hidden_cases_use_both_warp_sizes_and_fewer_warps_than_rows():
    cases = ch24.softmax_warp.cases(hidden=True)
    assert {c.size[2] for c in cases} == {32, 64}
    assert {c.threads for c in cases} == set(ch24.WARP_BLOCKS)
    for c in cases:
        warps = c.blocks * c.threads // c.size[2]
        assert warps < c.size[0] or c.size[0] <= 4
    assert all(c.size[2] == 64 for c in ch24.softmax_warp.portability_cases(64))
    visible = ch24.softmax_warp.cases()
    assert all(c.size[2] == ag.backend.warp_size and c.threads == 64 for c in visible)


def test_the_speed_sample_agrees_with_the_whole_spec():
    rng = np.random.default_rng(2)
    x = ch24.make_rows_fast(rng, 5, 333)
    inputs = {"x": x, "warp_size": 32}
    idx = np.array([0, 332, 333, 1000, x.size - 1])
    expected, tol = ch24.softmax_warp.sampled(inputs, idx)
    assert np.allclose(expected["y"], ch24.softmax_host(x).reshape(-1)[idx], rtol=1e-14, atol=0)
    whole = ch24.softmax_tolerance(x, ch24.warp_chain(333, 32)).reshape(-1)[idx]
    assert np.allclose(tol["y"], whole, rtol=1e-12, atol=0)


@pytest.mark.skipif(not CPU, reason="CPU mode: a fully masked row's NaN, as the simulator gives it")
def test_a_nan_for_a_fully_masked_row_is_named():
    @cuda.jit
    def nan_rows(x, y):
        r = cuda.grid(1)
        if r < x.shape[0]:
            m = float32(-math.inf)
            for j in range(x.shape[1]):
                m = max(m, x[r, j])
            d = float32(0.0)
            for j in range(x.shape[1]):
                if x[r, j] > float32(-math.inf):
                    d += math.exp(x[r, j] - m)
            for j in range(x.shape[1]):
                y[r, j] = math.exp(x[r, j] - m) / d if d > 0 else float32(math.nan)
    with pytest.raises(ag.CheckFailed) as failure:
        ch24.softmax_rows.check(nan_rows)
    assert "all −inf" in str(failure.value) and "0/0" in str(failure.value)


# ---- the measuring cell --------------------------------------------------------------------------

@pytest.mark.skipif(not CPU, reason="without a GPU only")
def test_the_measuring_cell_without_a_gpu(capsys):
    with pytest.raises(ag.timing.NeedsGPU):
        ch24.measure()
    if ch24.recorded() is None:
        assert ch24.chart() is None
        assert "has not been recorded yet" in capsys.readouterr().out
    rows = [{"label": label, "cols": c, "rows": 1, "ms": 1.0, "gbps": g, "right": True}
            for label, g in (("a", 10.0), (ch24.COPY, 20.0)) for c in (32, 1024)]
    ax = ch24.chart(rows)
    assert len(ax.get_lines()) == 2 and ax.get_xscale() == "log"


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """The course's three softmax kernels compile for compute capability 9.0."""
    assert_compiles_for_h200("ch24", (
        "r.cuda, r.float32, r.uint64 = cuda, numba.float32, numba.uint64\n"
        "f2 = types.float32[:, ::1]\n"
        "k = r._softmax_kernels.__wrapped__()\n"
        "sigs = [(k['rows'], (f2, f2)), (k['warp'], (f2, f2)), (k['three_pass'], (f2, f2))]\n"),
        3)


def _time_once(monkeypatch):
    """The measuring cells' timers replaced by one call each (the simulator runs the launches)."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)

    def cpu_once(label, fn, repeats=0, nbytes=0, flops=0, **kw):
        fn()
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    monkeypatch.setattr(timing, "time_cpu", cpu_once)
    monkeypatch.setattr(timing, "copy_ceiling",
                        lambda nbytes, repeats=20: timing.Stats("copy", 1.0, 1, bytes=nbytes))
    monkeypatch.setattr(cuda, "get_current_device",
                        lambda: type("Dev", (), {"MULTIPROCESSOR_COUNT": 1, "WARP_SIZE": 32})())
    monkeypatch.setattr(ch24.notebook, "_torch_softmax", lambda: None)


@pytest.mark.skipif(not CPU, reason="the measuring cell's launches, run once in the simulator")
def test_the_measuring_cell_runs_every_way_and_checks_each_result(monkeypatch):
    """The GPU measuring cell's launches, run once each in the simulator on small matrices (its
    timers replaced by one call): every way computes y (checked), a wrong kernel is marked, and a
    kernel of an unknown kind is refused with a sentence."""
    _time_once(monkeypatch)

    @cuda.jit
    def halves(x, y):                  # one thread per row, the second half of the row left out
        r = cuda.grid(1)
        if r < x.shape[0]:
            n = x.shape[1] // 2 + 1
            m = x[r, 0]
            for j in range(n):
                m = max(m, x[r, j])
            d = float32(0.0)
            for j in range(n):
                d += math.exp(x[r, j] - m)
            for j in range(x.shape[1]):
                y[r, j] = math.exp(x[r, j] - m) / d
    rows = ch24.measure({"halves": ("rows", halves)}, lengths=(5, 40), total=120, repeats=1)
    labels = {r["label"] for r in rows}
    assert len(rows) == 2 * 6 and ch24.COPY in labels
    assert all(r["right"] for r in rows if r["label"] != "halves")
    assert not any(r["right"] for r in rows if r["label"] == "halves")
    with pytest.raises(ValueError, match="'rows', 'warp' or 'triton'"):
        ch24.measure({"x": ("block", halves)}, lengths=(5,), total=10)


# ---- 24.4: the softmax in Triton -------------------------------------------------------------------

from autograder.machine import triton_bridge  # noqa: E402

TRITON_MISSING = triton_bridge.unavailable_reason()
needs_triton = pytest.mark.skipif(TRITON_MISSING is not None, reason=TRITON_MISSING or "")
L2E = F(np.log2(np.e))          # fl32(log2 e), the constant Triton's exp multiplies by


def _ex2_approx(v, bias):
    """Triton's float32 exp on the GPU: ex2.approx.f32 of fl(v · fl32(log2 e)), here correctly
    rounded then pushed ``bias`` ulp (ex2.approx is within 2)."""
    p = np.asarray(v, F) * L2E                                   # one float32 rounding
    e = np.exp2(p.astype(np.float64)).astype(F)
    for _ in range(abs(bias)):
        e = np.nextafter(e, F(np.inf) if bias > 0 else F(0))
    return e


def _div_full(a, b, bias):
    """div.full.f32: within 2 ulp of a / b; here pushed ``bias`` ulp."""
    with np.errstate(over="ignore"):
        q = (np.asarray(a, np.float64) / np.asarray(b, np.float64)).astype(F)
    for _ in range(abs(bias)):
        q = np.nextafter(q, F(np.inf) if bias > 0 else F(0))
    return q


def _tree(values):
    """A butterfly (or pairwise tree) over a power-of-two count of float32 partials."""
    values = list(values)
    while len(values) > 1:
        values = [F(a + b) for a, b in zip(values[::2], values[1::2])]
    return values[0]


def _triton_sum(e, warps):
    """tl.sum as Triton's NVIDIA backend computes it for a 1-D block: each of the 32·warps
    threads holds runs of 4 neighbouring values (every 4·32·warps) and adds them in turn, then a
    butterfly over the warp's 32 lanes, then over the warps."""
    threads = 32 * warps
    per = np.zeros(threads, F)
    for t in range(threads):
        idx = [i for g in range(t, -(-e.size // 4), threads) for i in range(4 * g, min(4 * g + 4, e.size))]
        acc = F(0)
        for i in idx:
            acc = F(acc + e[i])
        per[t] = acc
    return _tree(_tree(per[w * 32:(w + 1) * 32]) for w in range(warps))


def _triton32(row, bias=0, warps=1, reciprocal=False, guard=True, first=None):
    """One row of 24.4's kernel in float32 as a GPU computes it; ``bias`` ulp on the exps of d
    (up) and of the outputs and the division (down). Bugs: ``guard=False`` (no fully masked rule),
    ``first`` (only the first ``first`` columns)."""
    row = np.asarray(row, F)
    n = row.size if first is None else min(first, row.size)
    block = 1 << max(n - 1, 0).bit_length()
    x = np.full(block, -np.inf, F)
    x[:n] = row[:n]
    m = x.max()
    if guard and m == -np.inf:
        m = F(0)
    with np.errstate(invalid="ignore"):
        t = (x - m).astype(F)
        d = _triton_sum(_ex2_approx(t, bias), warps)
        e = _ex2_approx(t, -bias)
        if guard and d == 0:
            d = F(1)
        y = (_div_full(e, d, -bias) if not reciprocal
             else (e * _div_full(F(1), d, -bias)).astype(F))
    out = np.full(row.size, np.nan, F)
    out[:n] = y[:n]
    return out


def _triton_excess(x, got):
    tol = ch24.softmax_tolerance(x, ch24.triton_chain(x.shape[1]), spread_units=ch24.TRITON_SPREAD,
                                 divide_units=ch24.TRITON_DIVIDE)
    with np.errstate(invalid="ignore"):
        excess = np.abs(got.astype(np.float64) - ch24.softmax_host(x)) / tol
    return float(np.nanmax(np.where(np.isnan(excess), np.inf, excess)))


def test_triton_tolerance_is_the_bound_of_its_exp_division_and_tree():
    """Triton's arithmetic (ex2.approx of the argument times fl32(log2 e), div.full.f32, the
    reduction tree) at its worst stays inside 24.4's tolerance, for one warp (the longest chain)
    and for eight; a missing guard, a dropped column range and the Numba bound's constants
    (spread once, division 2u) do not hold it."""
    assert 2 + ch24.specs.LOG2E_F32_ERROR < ch24.TRITON_SPREAD and ch24.TRITON_DIVIDE >= 4 + 1
    rng = np.random.default_rng(244)
    x = ch24.make_rows(rng, 6, 300)
    x[5] = (rng.standard_normal(300) * 30 + 5e3).astype(F)        # large spreads, large offset
    for bias, warps, reciprocal in ((2, 1, False), (-2, 1, True), (2, 8, True)):
        got = np.array([_triton32(r, bias, warps, reciprocal) for r in x])
        assert _triton_excess(x, got) <= 1.0, (bias, warps, reciprocal)
    # One exponential of an exact argument t ≤ 0: CUDA's expf is allowed 4u (and t·u for a
    # rounded argument); Triton's exp needs more than that (its multiply and constant), and never
    # more than 24.4's 4u + 2.25·|t|·u.
    t = -np.linspace(1.0, 87.0, 20001).astype(F)
    for bias in (0, 2, -2):
        rel = np.abs(_ex2_approx(t, bias).astype(np.float64) / np.exp(t.astype(np.float64)) - 1)
        assert np.all(rel <= (4 + ch24.TRITON_SPREAD * -t.astype(np.float64)) * 2.0 ** -24)
        if bias == 0:
            assert np.any(rel > (4 + 1.0 * -t.astype(np.float64)) * 2.0 ** -24)
    # Bugs: a fully masked row computed without the guard; only the first 256 columns.
    assert _triton_excess(x[[3]], np.array([_triton32(x[3], guard=False)])) == np.inf
    assert _triton_excess(x[[0]], np.array([_triton32(x[0], first=256)])) == np.inf
    tail = _triton32(x[0], first=256)
    tail[256:] = 0                                # "written", but normalised over a prefix
    assert _triton_excess(x[[0]], tail[None, :]) > 50


def test_triton_cases_keep_cpu_mode_small_and_rows_off_powers_of_two():
    """At most 64 programs a case in CPU mode (the interpreter's cost), the fixed row lengths off
    a power of two (padding lanes in every block) but for the tiniest and the longest, a row
    longer than a fixed block of 2048 among the hidden cases, every kind of mask, and hidden
    cases that change with the secret."""
    sizes = ch24.softmax_triton.sizes
    for cols in {s[1] for s in sizes.visible + sizes.hidden} - {1, 2, ch24.TRITON_MAX_COLS}:
        assert cols & (cols - 1), cols
    for hidden in (False, True):
        for c in ch24.softmax_triton.cases(hidden=hidden):
            rows, cols = c.size
            assert rows <= 64 or not CPU
            assert 1 <= cols <= ch24.TRITON_MAX_COLS
            assert c.inputs["x"].shape == (rows, cols) and c.inputs["x"].dtype == F
    hidden = ch24.softmax_triton.cases(hidden=True)
    assert max(c.size[1] for c in hidden) > 2048
    assert any(np.isneginf(c.inputs["x"]).all(axis=1).any() for c in hidden)
    other = ch24.softmax_triton.cases(hidden=True, seed=5)
    assert [c.size for c in other] != [c.size for c in hidden]


def test_triton_speed_sample_agrees_with_the_whole_spec():
    x = ch24.make_rows_fast(np.random.default_rng(4), 4, 555)
    idx = np.array([0, 554, 555, 1500, x.size - 1])
    expected, tol = ch24.softmax_triton.sampled({"x": x}, idx)
    assert np.allclose(expected["y"], ch24.softmax_host(x).reshape(-1)[idx], rtol=1e-14, atol=0)
    whole = ch24.softmax_tolerance(x, ch24.triton_chain(555), spread_units=ch24.TRITON_SPREAD,
                                   divide_units=ch24.TRITON_DIVIDE).reshape(-1)[idx]
    assert np.allclose(tol["y"], whole, rtol=1e-12, atol=0)


def test_importing_the_course_never_imports_triton():
    """Triton installs on Linux only: the package, chapter 24 included, imports it only when
    the Triton reference is asked for."""
    import subprocess
    import sys
    code = ("import sys, autograder as ag; ag.problems.ch24.softmax_triton.cases(); "
            "print('triton' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr[-2000:]


def test_where_triton_is_missing_the_cells_run_and_the_checks_say_why(monkeypatch, capsys):
    """Without Triton: stand-ins let the exercise cell define its kernel and launcher, a launch
    says why it cannot run, and the checks print the reason instead of failing the notebook."""
    why = "Triton publishes wheels for Linux (x86-64 and Arm64) only, not for Darwin arm64"
    monkeypatch.setattr(triton_bridge, "unavailable_reason", lambda: why)
    triton, tl, missing = ch24.import_triton()
    assert missing == why

    @triton.jit
    def kernel(x_ptr, BLOCK: tl.constexpr):
        pass

    assert [triton.next_power_of_2(n) for n in (1, 2, 3, 300, 4096)] == [1, 2, 4, 512, 4096]
    assert triton.cdiv(10, 4) == 3
    with pytest.raises(RuntimeError, match="Linux"):
        kernel[(1,)](None, BLOCK=4)
    called = []
    for check in (ch24.softmax_triton.check, ch24.softmax_triton.check_hidden):
        check(lambda x, y: called.append(1))
    assert not called and capsys.readouterr().out.count("not checked on this machine") == 2


def _triton_launcher(tmp_path, body: str, name: str):
    """A learner's launcher ``softmax_triton`` from ``body``, made through a file as a notebook
    cell makes it (Triton reads a kernel's source)."""
    import importlib.util
    path = tmp_path / f"{name}_cell.py"
    path.write_text("import triton\nimport triton.language as tl\n"
                    "from autograder.machine.triton_bridge import view\n" + body)
    spec = importlib.util.spec_from_file_location(f"{name}_cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.softmax_triton


TRITON_KERNEL = '''
@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=inside, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)
    e = tl.exp(x - m)
    tl.store(y_ptr + row * cols + offs, e / tl.where(tl.sum(e, axis=0) > 0.0, tl.sum(e, axis=0), 1.0), mask=inside)


def softmax_triton(x, y):
    BLOCK = triton.next_power_of_2(x.shape[1])
    softmax_triton_kernel[(x.shape[0],)](view(x), view(y), x.shape[1], BLOCK=BLOCK)
'''

# name -> (text replaced in TRITON_KERNEL, its replacement, what the failed check must say)
TRITON_BUGS = {
    "no_mask": ('mask=inside, other=-float("inf")', "", "signal 11"),
    "max_not_subtracted": ("e = tl.exp(x - m)", "e = tl.exp(x)", "Subtract the row's maximum"),
    "fully_masked_row_nan": ('    m = tl.where(m == -float("inf"), 0.0, m)\n', "", "tl.max is −inf"),
    "first_block_only": ("BLOCK = triton.next_power_of_2(x.shape[1])", "BLOCK = 1024",
                         "the block must cover the row"),
}


@needs_triton
@pytest.mark.skipif(not CPU, reason="CPU mode: Triton's interpreter (test_gpu runs Triton on a GPU)")
def test_triton_reference_and_a_learner_kernel_pass_visible_and_hidden(tmp_path):
    """The course's Triton launcher passes the visible cases, and a learner's kernel (made as a
    notebook cell makes it) the visible and the hidden ones."""
    ch24.softmax_triton.check(ch24.reference_softmax_triton())
    mine = _triton_launcher(tmp_path, TRITON_KERNEL, "mine")
    ch24.softmax_triton.check(mine)
    ch24.softmax_triton.check_hidden(mine)


@needs_triton
@pytest.mark.skipif(not CPU, reason="CPU mode: Triton's interpreter (test_gpu runs Triton on a GPU)")
@pytest.mark.parametrize("bug", sorted(TRITON_BUGS))
def test_plain_triton_bugs_fail_and_say_why(tmp_path, bug):
    """No mask (a fault), no maximum (overflow at offsets of 1e4), no rule for a fully masked row
    (NaN), a fixed block of 1024 (the hidden rows of 2500): each fails, with the reason."""
    import faulthandler
    import sys
    old, new, said = TRITON_BUGS[bug]
    assert old in TRITON_KERNEL
    launcher = _triton_launcher(tmp_path, TRITON_KERNEL.replace(old, new), bug)
    check = (ch24.softmax_triton.check_hidden if bug == "first_block_only"
             else ch24.softmax_triton.check)
    dumps = faulthandler.is_enabled()
    faulthandler.disable()            # the forked run's fault is the point: no dump of it
    try:
        with pytest.raises(ag.CheckFailed) as failure:
            check(launcher)
    finally:
        if dumps:
            faulthandler.enable(file=sys.__stderr__)
    assert said in str(failure.value), str(failure.value)


@needs_triton
@pytest.mark.skipif(not CPU, reason="the comparing cell's launches, run once in CPU mode")
def test_the_triton_comparing_cell_runs_both_languages_and_checks_them(monkeypatch):
    """24.4's comparing cell (timers replaced by one call): the warp kernel of 24.2 and the
    Triton launchers all compute y, checked; the course's Numba kernels are left out."""
    _time_once(monkeypatch)
    rows = ch24.compare_triton(ch24.reference_softmax_warp(), ch24.reference_softmax_triton(),
                               lengths=(40,), total=120, repeats=1)
    labels = [r["label"] for r in rows]
    assert "one program per row, Triton (yours)" in labels and ch24.COPY in labels
    assert "one thread per row (course)" not in labels
    assert all(r["right"] for r in rows), rows


@pytest.mark.gpu
@needs_triton
def test_on_the_gpu_a_learner_triton_kernel_passes_its_checks_and_speed_and_the_course_one_is_refused(tmp_path):
    """On a GPU: the notebook's kernel (a learner's cell) compiles, passes the visible and hidden
    cases (rows up to 16,384) and the speed test against the course's Triton kernel; the course's
    launcher handed in as a submission is not the learner's."""
    mine = _triton_launcher(tmp_path, TRITON_KERNEL.replace(
        "BLOCK=BLOCK)", "BLOCK=BLOCK, num_warps=max(1, min(16, BLOCK // 512)))"), "gpu_mine")
    ch24.softmax_triton.check(mine)
    ch24.softmax_triton.check_hidden(mine)
    ch24.softmax_triton.check_speed(mine)
    with pytest.raises(ag.CheckFailed, match="not yours"):
        ch24.softmax_triton.check_speed(ch24.reference_softmax_triton())
