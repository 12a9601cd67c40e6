"""Chapter 25: are the float64 specs right (LayerNorm and RMSNorm against their definitions, the
backward pass against finite differences), are the tolerances the derived error bounds (float32
Welford with Chan's merge and the two-pass formula, emulated lane by lane, stay within them on
every case; E[x²] − E[x]², the n − 1 variance, ε outside the square root and a wrong merge weight
do not), do the inputs hold what the bounds and the bugs need (a large-offset row in every case,
the bound never vacuous), does the speed test's sample agree with the whole spec, do the hidden
cases alternate warp sizes, and does the measuring cell say so when its H200 run is missing? For
25.4 (LayerNorm in Triton): does the Triton bound cover the orders a Triton sum takes (NumPy's
pairwise sum in the interpreter, a thread's lanes, shuffles and warps on a GPU, emulated), does
the solution pass and each plain bug fail, and do the checks skip where Triton is missing?"""

import numpy as np
import pytest

import autograder as ag
from autograder.machine import triton_bridge

ch25 = ag.problems.ch25
CPU = not ag.backend.is_gpu
F = np.float32


# ---- the specs ---------------------------------------------------------------------------------

def test_specs_agree_with_the_definitions():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 7)) * 2 + 5
    g, b = rng.standard_normal(7), rng.standard_normal(7)
    y, mu, r = ch25.layernorm_host(x, g, b, 1e-3)
    for i in range(3):
        row = x[i]
        want = (row - row.mean()) / np.sqrt(((row - row.mean()) ** 2).sum() / 7 + 1e-3) * g + b
        assert np.allclose(y[i], want, rtol=1e-13)
    assert np.allclose(mu, x.mean(axis=1)) and np.allclose(r, 1 / np.sqrt(x.var(axis=1) + 1e-3))
    yr, rr = ch25.rmsnorm_host(x, g, 1e-3)
    assert np.allclose(yr, x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-3) * g)


def test_the_backward_spec_is_the_gradient_of_the_forward():
    """dx from the saved (float64 here) mean and rstd equals a finite-difference gradient of
    L = Σ dy · y(x)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6)) + 3
    g, b, dy = rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal((2, 6))
    eps = 1e-2
    _, mu, r = ch25.layernorm_host(x, g, b, eps)
    dx, _ = ch25.backward_host(dy, x, g, mu, r)
    h = 1e-6
    numeric = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        numeric[idx] = (np.sum(dy * ch25.layernorm_host(up, g, b, eps)[0])
                        - np.sum(dy * ch25.layernorm_host(down, g, b, eps)[0])) / (2 * h)
    assert np.allclose(dx, numeric, rtol=1e-6, atol=1e-8)


# ---- float32 algorithms, emulated lane by lane ----------------------------------------------------

def _lanes(x, warp):
    """x [rows, n] as [rows, k, warp] float32 (lane l holds elements l, l + warp, ...) and the mask
    of real elements."""
    rows, n = x.shape
    k = -(-n // warp)
    pad = np.zeros((rows, k * warp), F)
    pad[:, :n] = x
    have = np.zeros((rows, k * warp), bool)
    have[:, :n] = True
    return pad.reshape(rows, k, warp), have.reshape(rows, k, warp)


def _butterfly(vals, merge, warp):
    offset = warp // 2
    while offset:
        partner = np.arange(warp) ^ offset
        vals = merge(vals, tuple(v[:, partner] for v in vals))
        offset //= 2
    return tuple(v[:, 0] for v in vals)


def _welford_stats(x, warp, weights="counts"):
    """(mean, M2) per row: float32 Welford in each lane, Chan's merge by an xor butterfly."""
    lanes, have = _lanes(x, warp)
    rows = x.shape[0]
    count, mean, m2 = (np.zeros((rows, warp), F) for _ in range(3))
    for j in range(lanes.shape[1]):
        v, on = lanes[:, j], have[:, j]
        c1 = np.where(on, count + F(1), count).astype(F)
        d = (v - mean).astype(F)
        mean1 = np.where(on, mean + (d / np.where(on, c1, F(1))).astype(F), mean).astype(F)
        m2 = np.where(on, m2 + (d * (v - mean1).astype(F)).astype(F), m2).astype(F)
        count, mean = c1, mean1

    def merge(a, b):
        (ca, ma, qa), (cb, mb, qb) = a, b
        total = (ca + cb).astype(F)
        safe = np.where(total > 0, total, F(1))
        d = (mb - ma).astype(F)
        if weights == "counts":
            m = (ma + (d * (cb / safe).astype(F)).astype(F)).astype(F)
            q = (qa + qb + (d * d * (ca * cb / safe).astype(F)).astype(F)).astype(F)
        else:                       # the bug: weights of 1/2
            m = (ma + d * F(0.5)).astype(F)
            q = (qa + qb + (d * d * (total * F(0.25))).astype(F)).astype(F)
        live = total > 0
        return (np.where(live, total, ca), np.where(live, m, ma), np.where(live, q, qa))
    _, mean, m2 = _butterfly((count, mean, m2), merge, warp)
    return mean, m2


def _lane_sums(v, warp):
    lanes, have = _lanes(v, warp)
    acc = np.zeros((v.shape[0], warp), F)
    for j in range(lanes.shape[1]):
        acc = (acc + np.where(have[:, j], lanes[:, j], F(0))).astype(F)
    return _butterfly((acc,), lambda a, b: ((a[0] + b[0]).astype(F),), warp)[0]


def _layernorm32(x, gamma, beta, eps, warp=32, how="welford"):
    n = x.shape[1]
    eps = F(eps)
    if how == "two_pass":
        mean = (_lane_sums(x, warp) / F(n)).astype(F)
        dev = (x - mean[:, None]).astype(F)
        var = (_lane_sums((dev * dev).astype(F), warp) / F(n)).astype(F)
    elif how == "textbook":
        mean = (_lane_sums(x, warp) / F(n)).astype(F)
        var = (_lane_sums((x * x).astype(F), warp) / F(n) - mean * mean).astype(F)
        var = np.maximum(var, F(0))
    else:
        mean, m2 = _welford_stats(x, warp, "counts" if how != "half_weights" else "half")
        var = (m2 / F(n if how != "unbiased" else max(n - 1, 1))).astype(F)
    if how == "eps_outside":
        rstd = (F(1) / (np.sqrt(var) + eps)).astype(F)
    else:
        rstd = (F(1) / np.sqrt((var + eps).astype(F))).astype(F)
    return ((x - mean[:, None]).astype(F) * rstd[:, None] * gamma + beta).astype(F)


def _all_cases(problem):
    return problem.cases() + problem.cases(hidden=True)


def test_welford_and_two_pass_stay_within_the_bound_at_both_warp_sizes():
    for case in _all_cases(ch25.layernorm_rows):
        expected, tol = ch25.layernorm_rows.reference_values(case)
        inp = case.inputs
        for warp in (32, 64):
            for how in ("welford", "two_pass"):
                got = _layernorm32(inp["x"], inp["gamma"], inp["beta"], inp["eps"], warp, how)
                assert np.all(np.abs(got - expected["y"]) <= tol["y"]), (case.label, warp, how)


@pytest.mark.parametrize("bug", ["textbook", "unbiased", "eps_outside", "half_weights"])
def test_each_classic_bug_misses_the_bound_on_the_visible_cases(bug):
    missed = 0
    for case in ch25.layernorm_rows.cases():
        expected, tol = ch25.layernorm_rows.reference_values(case)
        inp = case.inputs
        got = _layernorm32(inp["x"], inp["gamma"], inp["beta"], inp["eps"], 32, bug)
        missed += bool(np.any(np.abs(got - expected["y"]) > tol["y"]))
    assert missed >= 1, bug


def test_textbook_variance_fails_on_large_offset_rows_by_far():
    """On the first visible case, E[x²] − E[x]² misses the bound by more than 10 times on a
    large-offset row, and Welford's error there is less than a tenth of the bound."""
    case = ch25.layernorm_rows.cases()[0]
    expected, tol = ch25.layernorm_rows.reference_values(case)
    inp = case.inputs
    bad = _layernorm32(inp["x"], inp["gamma"], inp["beta"], inp["eps"], 32, "textbook")
    good = _layernorm32(inp["x"], inp["gamma"], inp["beta"], inp["eps"], 32, "welford")
    x64 = inp["x"].astype(np.float64)
    kappa = np.abs(x64.mean(axis=1)) / x64.std(axis=1)
    row = int(np.argmax(kappa))
    assert kappa[row] > 1e3
    assert np.max(np.abs(bad[row] - expected["y"][row]) / tol["y"][row]) > 10
    assert np.max(np.abs(good[row] - expected["y"][row]) / tol["y"][row]) < 0.1


def test_rmsnorm_bound_holds_and_eps_outside_fails():
    for case in _all_cases(ch25.rmsnorm_rows):
        expected, tol = ch25.rmsnorm_rows.reference_values(case)
        x, g, eps = case.inputs["x"], case.inputs["gamma"], F(case.inputs["eps"])
        n = x.shape[1]
        s2 = _lane_sums((x * x).astype(F), 32)
        got = (x * (F(1) / np.sqrt((s2 / F(n) + eps).astype(F)))[:, None] * g).astype(F)
        assert np.all(np.abs(got - expected["y"]) <= tol["y"]), case.label
    case = ch25.rmsnorm_rows.cases()[0]
    expected, tol = ch25.rmsnorm_rows.reference_values(case)
    x, g, eps = case.inputs["x"], case.inputs["gamma"], F(case.inputs["eps"])
    s2 = _lane_sums((x * x).astype(F), 32)
    wrong = (x * (F(1) / (np.sqrt(s2 / F(x.shape[1])) + eps))[:, None] * g).astype(F)
    assert np.any(np.abs(wrong - expected["y"]) > tol["y"])


def _backward32(inp, warp=32, drop=None):
    dy, x, g, mu, r = (inp[k] for k in ("dy", "x", "gamma", "mean", "rstd"))
    n = x.shape[1]
    xhat = ((x - mu[:, None]).astype(F) * r[:, None]).astype(F)
    gd = (g * dy).astype(F)
    a = (_lane_sums(gd, warp) / F(n)).astype(F)
    b = (_lane_sums((gd * xhat).astype(F), warp) / F(n)).astype(F)
    a = a * (drop != "mean")
    b = b * (drop != "xhat")
    return (r[:, None] * (gd - a[:, None] - (xhat * b[:, None]).astype(F))).astype(F)


def test_backward_bound_holds_and_each_missing_term_fails():
    for case in _all_cases(ch25.layernorm_backward):
        expected, tol = ch25.layernorm_backward.reference_values(case)
        for warp in (32, 64):
            got = _backward32(case.inputs, warp)
            assert np.all(np.abs(got - expected["dx"]) <= tol["dx"]), (case.label, warp)
    case = ch25.layernorm_backward.cases()[0]
    expected, tol = ch25.layernorm_backward.reference_values(case)
    for drop in ("mean", "xhat"):
        assert np.mean(np.abs(_backward32(case.inputs, 32, drop) - expected["dx"]) > tol["dx"]) > 0.5


# ---- inputs, cases and the speed sample -------------------------------------------------------------

def test_every_case_has_a_large_offset_row_and_a_meaningful_bound():
    for problem in ch25.PROBLEMS:
        for case in _all_cases(problem):
            x = case.inputs["x"].astype(np.float64)
            kappa = np.abs(x.mean(axis=1)) / np.maximum(x.std(axis=1), 1e-300)
            assert kappa.max() > 0.4 * ch25.max_kappa(x.shape[1]), (problem.name, case.label)
            _, tol = problem.reference_values(case)
            assert np.all(np.isfinite(next(iter(tol.values())))), (problem.name, case.label)


def test_hidden_cases_alternate_warp_sizes_in_cpu_mode_and_vary_eps():
    cases = ch25.layernorm_rows.cases(hidden=True)
    warps = [c.inputs["warp_size"] for c in cases]
    if CPU:
        assert warps[:2] == [64, 32] and set(warps) == {32, 64}
    assert len({float(c.inputs["eps"]) for c in cases}) == len(cases)
    port = ch25.layernorm_rows.portability_cases(64, seed=3)
    assert port and all(c.inputs["warp_size"] == 64 and c.blocks == 2 for c in port)
    visible = {c.size for c in ch25.layernorm_rows.cases()}
    assert not visible & {c.size for c in cases[:len(ch25.layernorm_rows.cpu_sizes.hidden)]}


def test_the_speed_sample_agrees_with_the_whole_spec():
    rng = np.random.default_rng(5)
    inputs = ch25.layernorm_rows._speed_inputs(rng, (40, 300))
    expected = ch25.layernorm_host(inputs["x"], inputs["gamma"], inputs["beta"], inputs["eps"])[0]
    tol = ch25.layernorm_bound(inputs["x"], inputs["gamma"], inputs["beta"], inputs["eps"], expected)
    idx = np.array([0, 299, 300, 4567, 40 * 300 - 1])
    want, allowed = ch25.layernorm_rows.sample_spec(inputs, idx)
    assert np.allclose(want["y"], expected.reshape(-1)[idx], rtol=1e-12, atol=1e-12)
    assert np.allclose(allowed["y"], tol.reshape(-1)[idx], rtol=1e-12)


# ---- the break-it table and the measuring cell --------------------------------------------------------

def test_the_variance_table_shows_the_textbook_formula_failing():
    rows = {r["offset"]: r for r in ch25.variance_errors((0.0, 1e4), n=512)}
    assert rows[0.0]["textbook_error"] < 1e-5
    assert rows[1e4]["textbook_error"] > 1 and rows[1e4]["welford_error"] < 1e-3
    assert rows[1e4]["two_pass_error"] < 1e-3


def test_the_chart_says_when_the_h200_run_is_missing_and_draws_one(capsys, monkeypatch):
    if ch25.recorded() is None:
        assert ch25.chart() is None
        assert ch25.NOT_RECORDED in capsys.readouterr().out
    rows = [{"label": lab, "n": n, "ms": 1.0, "gbps": g * n, "right": True}
            for lab, g in (("LayerNorm, Welford + Chan (course)", 1.0), ("copy of the same bytes", 2.0))
            for n in (256, 1024)]
    monkeypatch.setattr(ch25.notebook, "recorded", lambda: {"title": "T", "device": "NVIDIA H200",
                                                            "rows": rows})
    fig = ch25.chart()
    lines = fig.axes[0].get_lines()
    assert [list(line.get_ydata()) for line in lines] == [[256.0, 1024.0], [512.0, 2048.0]]
    assert "NVIDIA H200" in fig.axes[0].get_title()


def test_measure_needs_a_gpu_in_cpu_mode():
    if not CPU:
        pytest.skip("CPU-mode behaviour")
    with pytest.raises(ag.timing.NeedsGPU):
        ch25.measure()


# ---- the GPU side, as far as CPU mode can take it ------------------------------------------------------

@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """The course's five kernels compile for compute capability 9.0 (real Numba CUDA, no GPU)."""
    from ptx import assert_compiles_for_h200
    assert_compiles_for_h200("ch25", (
        "r.cuda, r.float32, r.uint64 = cuda, numba.float32, numba.uint64\n"
        "f2 = types.float32[:, ::1]; f1 = types.float32[::1]; e = types.float32\n"
        "ln = (f2, f1, f1, e, f2)\n"
        "sigs = [(r.reference_layernorm.__wrapped__(), ln), (r.two_pass_layernorm.__wrapped__(), ln),\n"
        "        (r.textbook_layernorm.__wrapped__(), ln),\n"
        "        (r.reference_rmsnorm.__wrapped__(), (f2, f1, e, f2)),\n"
        "        (r.reference_layernorm_backward.__wrapped__(), (f2, f2, f1, f1, f1, f2))]\n"), 5)


def test_the_measuring_cell_runs_every_kernel_and_checks_each_result(monkeypatch):
    """The GPU measuring cell's launches, run once each in the simulator on small rows (its timer
    replaced by one call), a Triton launcher's in Triton's interpreter: every kernel's rows are
    checked against the bound, a wrong kernel is marked, and a kernel of an unknown kind is
    refused with a sentence."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    monkeypatch.setattr(timing, "copy_ceiling", lambda nbytes, repeats=0: timing.Stats(
        "copy", 0.5, 1, bytes=nbytes))
    monkeypatch.setattr(ch25.notebook, "speed_shape", lambda size: (2, 64))
    mine = {"textbook": ("layernorm", ch25.textbook_layernorm())}
    if CPU and TRITON_MISSING is None:      # a Triton launcher, run in Triton's interpreter
        mine["Triton (course)"] = ("layernorm_call", ch25.reference_layernorm_triton())
    rows = ch25.measure(mine, row_lengths=(40,), elements=200, repeats=1)
    right = {r["label"]: r["right"] for r in rows}
    assert right.pop("textbook") is False and all(right.values()), rows
    assert len(right) == 3 + len(mine), rows
    with pytest.raises(ValueError, match="'rmsnorm' or 'layernorm_call', not 'softmax'"):
        ch25.measure({"x": ("softmax", None)}, row_lengths=(40,), elements=80)


def test_a_cancelling_variance_is_named_and_other_bugs_are_not():
    """Wrong only on the large-offset rows: the verdict names E[x²] − E[x]²; wrong everywhere (γ
    and β swapped): it does not."""
    case = ch25.layernorm_rows.cases()[0]
    expected, tol = ch25.layernorm_rows.reference_values(case)
    inp = case.inputs
    textbook = _layernorm32(inp["x"], inp["gamma"], inp["beta"], inp["eps"], 32, "textbook")
    assert ch25.specs.diagnose_layernorm(case, expected["y"], tol["y"], textbook) == \
        ch25.specs.CANCELLATION_HINT
    swapped = _layernorm32(inp["x"], inp["beta"], inp["gamma"], inp["eps"], 32)
    assert ch25.specs.diagnose_layernorm(case, expected["y"], tol["y"], swapped) is None


# ---- 25.4: LayerNorm in Triton ------------------------------------------------------------------

TRITON_MISSING = triton_bridge.unavailable_reason()
needs_triton = pytest.mark.skipif(TRITON_MISSING is not None, reason=TRITON_MISSING or "")


@pytest.fixture(scope="module")
def triton_kernels():
    """tests/ch25_triton_kernels.py, imported once autograder has chosen the backend (in CPU mode
    it set TRITON_INTERPRET, so the kernels run in Triton's interpreter)."""
    if TRITON_MISSING is not None:
        pytest.skip(TRITON_MISSING)
    import ch25_triton_kernels
    return ch25_triton_kernels


def _numpy_pairwise(a):
    """NumPy's float32 pairwise sum, written out: the order whose depth numpy_sum_depth counts."""
    n = len(a)
    if n < 8:
        res = F(-0.0)
        for v in a:
            res = F(res + v)
        return res
    if n <= 128:
        r = [F(v) for v in a[:8]]
        i = 8
        while i < n - n % 8:
            r = [F(r[j] + a[i + j]) for j in range(8)]
            i += 8
        res = F(F(F(r[0] + r[1]) + F(r[2] + r[3])) + F(F(r[4] + r[5]) + F(r[6] + r[7])))
        for v in a[i:]:
            res = F(res + v)
        return res
    half = n // 2 - (n // 2) % 8
    return F(_numpy_pairwise(a[:half]) + _numpy_pairwise(a[half:]))


def test_the_triton_chain_covers_numpys_pairwise_sum_in_the_interpreter():
    """CPU mode's tl.sum is NumPy's pairwise sum (the model agrees with np.sum bit for bit), and
    its longest chain, after k column blocks of B ≥ 32 lanes or one block of the next power of two,
    plus the division by n, stays within triton_chain(n) up to 2^15 columns; the GPU's is the
    formula of triton_specs' docstring."""
    from autograder.problems.ch25.triton_specs import MIN_LOOP_BLOCK, numpy_sum_depth
    rng = np.random.default_rng(7)
    for m in (5, 8, 120, 127, 129, 1000):
        a = (rng.standard_normal(m) * 10.0 ** rng.uniform(-3, 3, m)).astype(F)
        assert _numpy_pairwise(a) == np.sum(a), m
    assert numpy_sum_depth(128) == 18 and numpy_sum_depth(256) == 19
    for n in range(1, 1 << 15):
        c = ch25.triton_chain(n)
        assert numpy_sum_depth(1 << (n - 1).bit_length()) + 1 <= c, n
        block = MIN_LOOP_BLOCK
        while block < n:
            assert -(-n // block) + numpy_sum_depth(block) + 1 <= c, (n, block)
            block *= 2
    assert ch25.triton_chain(4096) == ch25.chain(4096) + 10


def _triton_gpu_sum(v, block, warps, run=4):
    """Row sums of v [rows, n] in float32 in the order compiled Triton adds them: blocks of
    ``block`` columns accumulated lane by lane, then each thread's lanes (runs of ``run``
    consecutive ones, threads in turn) one after another, a butterfly over the 32 lanes of each
    warp, and one over the warps."""
    rows, n = v.shape
    k = -(-n // block)
    padded = np.zeros((rows, k * block), F)
    padded[:, :n] = v
    acc = np.zeros((rows, block), F)
    for j in range(k):
        acc = (acc + padded[:, j * block:(j + 1) * block]).astype(F)
    threads = 32 * warps
    per = -(-block // (run * threads))
    lanes = np.zeros((rows, per * run * threads), F)
    lanes[:, :block] = acc
    held = lanes.reshape(rows, per, threads, run).transpose(0, 2, 1, 3).reshape(rows, threads, -1)
    s = np.zeros((rows, threads), F)
    for j in range(held.shape[2]):
        s = (s + held[:, :, j]).astype(F)
    s = s.reshape(rows, warps, 32)
    offset = 16
    while offset:
        s = (s + s[:, :, np.arange(32) ^ offset]).astype(F)
        offset //= 2
    w = s[:, :, 0]
    offset = warps // 2
    while offset:
        w = (w + w[:, np.arange(warps) ^ offset]).astype(F)
        offset //= 2
    return w[:, 0]


def _triton_layernorm32(x, gamma, beta, eps, block, warps):
    n = x.shape[1]
    mean = (_triton_gpu_sum(x, block, warps) / F(n)).astype(F)
    d = (x - mean[:, None]).astype(F)
    var = (_triton_gpu_sum((d * d).astype(F), block, warps) / F(n)).astype(F)
    rstd = (F(1) / np.sqrt((var + F(eps)).astype(F))).astype(F)
    return ((d * rstd[:, None]).astype(F) * gamma + beta).astype(F)


def test_triton_orders_of_evaluation_stay_within_the_triton_bound(triton_kernels):
    """On every case: the course's Triton kernels run (in CPU mode, Triton's interpreter: one
    block per row, and the looped kernel with blocks of 32 columns) and the GPU's order emulated
    in float32 (one block over 1, 4 and 16 warps; a loop of 32-column blocks) stay within the
    bound; E[x²] − E[x]² in the GPU's order does not."""
    from autograder.problems.ch25 import triton_reference
    problem = ch25.layernorm_triton
    textbook_missed = 0
    for case in _all_cases(problem):
        expected, tol = problem.reference_values(case)
        inp = case.inputs
        x, g, b, eps = inp["x"], inp["gamma"], inp["beta"], float(inp["eps"])
        if CPU:
            for block in (None, 32):
                y = np.full_like(x, np.nan)
                triton_reference.layernorm(x, g, b, eps, y, block=block)
                assert np.all(np.abs(y - expected["y"]) <= tol["y"]), (case.label, block)
        full = 1 << (x.shape[1] - 1).bit_length()
        for block, warps in ((full, 1), (full, 4), (full, 16), (32, 1), (32, 4)):
            y = _triton_layernorm32(x, g, b, eps, block, warps)
            assert np.all(np.abs(y - expected["y"]) <= tol["y"]), (case.label, block, warps)
        n = x.shape[1]
        mean = (_triton_gpu_sum(x, full, 4) / F(n)).astype(F)
        var = np.maximum((_triton_gpu_sum((x * x).astype(F), full, 4) / F(n) - mean * mean)
                         .astype(F), F(0))
        y = (((x - mean[:, None]).astype(F) / np.sqrt(var + F(eps))[:, None]).astype(F) * g
             + b).astype(F)
        textbook_missed += bool(np.any(np.abs(y - expected["y"]) > tol["y"]))
    assert textbook_missed >= len(_all_cases(problem)) - 1


def test_the_triton_solution_passes_and_each_plain_bug_fails(triton_kernels):
    """The notebook's kernel passes the visible and hidden checks; E[x²] − E[x]², padded lanes
    squared, a block of 64 columns on rows of 120 and γ, β left out each fail the visible check,
    the first three with the hint that names their cause."""
    from autograder.problems.ch25 import triton_specs
    problem = ch25.layernorm_triton
    problem.check(triton_kernels.launcher("right"))
    problem.check_hidden(triton_kernels.launcher("right"))
    bugs = {"textbook": (triton_kernels.launcher("textbook"), triton_specs.CANCELLATION_HINT),
            "padding_squared": (triton_kernels.launcher("padding_squared"),
                                triton_specs.PADDING_HINT),
            "first_64_columns": (triton_kernels.launcher("right", fixed_block=64),
                                 triton_specs.UNWRITTEN_HINT),
            "no_affine": (triton_kernels.launcher("no_affine"), None)}
    for name, (launcher, hint) in bugs.items():
        with pytest.raises(ag.CheckFailed) as failed:
            problem.check(launcher)
        if hint:
            assert failed.value.verdict.hint == hint, (name, failed.value.verdict)


def test_the_triton_exercise_draws_odd_sizes_and_samples_its_own_bound():
    """Hidden random sizes are odd (no power-of-two block divides them); no case carries a
    launch shape or a warp size; the speed sample's bound is the Triton one."""
    problem = ch25.layernorm_triton
    fixed = len(problem.sizes.hidden)
    drawn = [c for seed in range(11, 15) for c in problem.cases(hidden=True, seed=seed)[fixed:]]
    assert len(drawn) == 4 * problem.sizes.hidden_random[0]
    assert all(v % 2 == 1 for c in drawn for v in c.size)
    cases = problem.cases() + problem.cases(hidden=True)
    assert all(not c.threads and "warp_size" not in c.inputs for c in cases)
    assert problem.portability_cases() == [] and problem.kernel_language == "triton"
    rng = np.random.default_rng(5)
    inputs = problem.speed_inputs(rng, (40, 300))
    expected = ch25.layernorm_host(inputs["x"], inputs["gamma"], inputs["beta"], inputs["eps"])[0]
    tol = ch25.layernorm_bound(inputs["x"], inputs["gamma"], inputs["beta"], inputs["eps"],
                               expected, c=ch25.triton_chain(300))
    idx = np.array([0, 299, 300, 4567, 40 * 300 - 1])
    want, allowed = problem.sampled(inputs, idx)
    assert np.allclose(want["y"], expected.reshape(-1)[idx], rtol=1e-12, atol=1e-12)
    assert np.allclose(allowed["y"], tol.reshape(-1)[idx], rtol=1e-12)


def test_without_triton_the_checks_skip_and_the_cells_still_run(monkeypatch, capsys):
    """Where Triton cannot be installed the checks print the reason and raise nothing, and the
    stand-in lets a cell define a kernel and its launcher; launching it raises the reason."""
    why = "Triton publishes wheels for Linux (x86-64 and Arm64) only"
    monkeypatch.setattr(triton_bridge, "unavailable_reason", lambda: why)
    triton = tl = ch25.TritonMissing(why)

    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr):
        pass

    def launcher(x, gamma, beta, eps, y):
        kernel[(x.shape[0],)](x, triton.next_power_of_2(x.shape[1]), BLOCK=8)

    problem = ch25.layernorm_triton
    problem.check(launcher)
    problem.check_hidden(launcher)
    problem.check_speed(launcher)
    out = capsys.readouterr().out
    assert out.count(why) == 3 and "skipped" in out
    with pytest.raises(RuntimeError, match="Linux"):
        launcher(np.zeros((2, 3)), None, None, 1e-5, None)


def test_importing_the_course_never_imports_triton():
    """Triton loads only when a Triton kernel is first asked for (it takes a second, and is not
    installed everywhere)."""
    import subprocess
    import sys
    code = ("import autograder, sys; assert 'triton' not in sys.modules; "
            "autograder.problems.ch25.layernorm_triton.cases(); print('triton' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "False", out.stderr[-2000:]


def test_compare_triton_needs_a_gpu_in_cpu_mode():
    if not CPU:
        pytest.skip("CPU-mode behaviour")
    with pytest.raises(ag.timing.NeedsGPU):
        ch25.compare_triton(None)
