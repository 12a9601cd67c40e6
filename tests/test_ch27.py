"""Chapter 27: is the format what the text says (nibble order, offset, ragged groups, the
quantisers), are the float64 specs the definitions, are the dequantised weights exact in float32
(the premise of the bound), are the tolerances the derived error bounds (float32 orders a correct
kernel may take, emulated lane by lane at both warp sizes, stay within them on every case; float16
sums, float16 weights, swapped nibbles, a nibble without its offset, a neighbouring group's scale
and a dropped ragged group miss them on the visible cases), does the speed test's sample agree
with the whole spec, do the hidden cases alternate warp sizes, and does the measuring cell say so
when its H200 run is missing? For 27.4 (in Triton): does the any-order bound cover a sequential
sum and NumPy's, does the solution pass and each plain bug fail, and do the checks skip where
Triton is missing?"""

import numpy as np
import pytest

import autograder as ag
from autograder.core.checks import TINY32, gamma
from autograder.machine import triton_bridge

ch27 = ag.problems.ch27
CPU = not ag.backend.is_gpu
F = np.float32
H = np.float16


# ---- the format ---------------------------------------------------------------------------------

def test_packing_puts_the_even_column_in_the_low_nibble_with_an_offset_of_8():
    q = np.array([[-8, 7, 0, 3, -1]], np.int8)
    packed = ch27.pack_int4(q)
    assert packed.dtype == np.uint8 and packed.shape == (1, 3)
    assert [int(b) for b in packed[0]] == [0x0 | 0xF << 4, 0x8 | 0xB << 4, 0x7 | 0x8 << 4]
    rng = np.random.default_rng(0)
    for k in (1, 2, 7, 64, 129):
        q = rng.integers(-8, 8, (3, k)).astype(np.int8)
        assert np.array_equal(ch27.unpack_int4(ch27.pack_int4(q), k), q)
    with pytest.raises(ValueError):
        ch27.pack_int4(np.array([[8]]))


def test_the_quantisers_round_to_the_nearest_step_of_their_groups_scale():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 301)) * 0.02
    w[2, 40:80] = 0.0                             # a group of zeros: scale 1, q = 0
    for bits, group, qmax in ((8, 64, 127), (4, 32, 7), (8, 128, 127)):
        q, s = ch27.quantize(w, group, bits)
        assert s.dtype == np.float16 and s.shape == (5, ch27.groups(301, group))
        assert q.dtype == np.int8 and np.abs(q).max() == qmax
        err = np.abs(ch27.dequantize(q, s, group) - w)
        assert np.all(err <= 0.5 * ch27.expand_scales(s, 301, group) * (1 + 1e-3))
    packed, s = ch27.quantize_int4(w, 32)
    assert packed.shape == (5, 151)
    assert np.array_equal(ch27.unpack_int4(packed, 301), ch27.quantize(w, 32, 4)[0])


def test_the_specs_agree_with_the_definitions():
    rng = np.random.default_rng(2)
    case = ch27.int4_matmul.make_inputs(rng, (2, 3, 11))
    y = ch27.int4_matmul.spec(**case)["y"]
    k, g = 11, case["group"]
    for b in range(2):
        for n in range(3):
            want = 0.0
            for c in range(k):
                byte = int(case["packed"][n, c // 2])
                nib = byte & 15 if c % 2 == 0 else byte >> 4
                want += (nib - 8) * float(case["scales"][n, c // g]) * float(case["x"][b, c])
            assert y[b, n] == pytest.approx(want, rel=1e-12, abs=1e-15)
    case = ch27.int8_matvec.make_inputs(rng, (4, 37))
    y = ch27.int8_matvec.spec(**case)["y"]
    g = case["group"]
    for n in range(4):
        want = sum(int(case["q"][n, c]) * float(case["scales"][n, c // g]) * float(case["x"][c])
                   for c in range(37))
        assert y[n] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_the_time_bound_counts_every_array_once():
    inputs = ch27.quant_time_bound.make_inputs(np.random.default_rng(4), 6)
    got = ch27.quant_time_bound.spec(**inputs)["seconds"]
    assert got[0] == pytest.approx((16384 * 8192 + 2 * 16384 * 64 + 2 * 8192 + 4 * 16384)
                                   / 4.8e12, rel=1e-15)
    assert got[2] == pytest.approx((16384 * 8192 * 2 + 2 * 8192 + 4 * 16384) / 4.8e12, rel=1e-15)
    assert got[1] == pytest.approx((16384 * 4096 + 2 * 16384 * 64 + 16 * 8192 + 32 * 16384)
                                   / 4.8e12, rel=1e-15)
    assert got[3] == pytest.approx((1 + 2 + 4 + 4) / 1e12, rel=1e-15)     # 1 × 2, one group
    assert set(inputs["bits"][inputs["group"] == 0]) <= {16.0}


def test_dequantised_weights_and_q_times_x_are_exact_in_float32():
    """The premise of the bound: q·s (|q| ≤ 127, s float16) and q·x (x float16) round nothing in
    float32, over every q and a spread of float16 values; a float16 product of q and s does."""
    rng = np.random.default_rng(3)
    s = (10.0 ** rng.uniform(-4, 2, 4000)).astype(H)
    q = np.arange(-128, 128)[:, None]
    exact = q * s.astype(np.float64)[None, :]
    assert np.array_equal((q.astype(F) * s.astype(F)[None, :]).astype(np.float64), exact)
    assert not np.array_equal((q.astype(H) * s[None, :]).astype(np.float64), exact)


# ---- float32 orders of evaluation, emulated -----------------------------------------------------------

def _weights(inputs):
    """(dequantised weights in float32 (exact), q as int64, scales per column (float32), x as a
    B × K float32 array, group)."""
    if "packed" in inputs:
        x = inputs["x"]
        q = ch27.unpack_int4(inputs["packed"], x.shape[1]).astype(np.int64)
    else:
        x = inputs["x"][None, :]
        q = inputs["q"].astype(np.int64)
    s = ch27.expand_scales(inputs["scales"], q.shape[1], inputs["group"]).astype(F)
    return (q.astype(F) * s).astype(F), q, s, x.astype(F), int(inputs["group"])


def _lanes_sum(terms, warp, dtype=F):
    """Σ over the last axis of ``terms`` (…, K) as a warp adds it: lane l adds k = l, l + warp, …
    one after another in ``dtype``, then an xor butterfly in float32."""
    *lead, k = terms.shape
    per = -(-k // warp)
    pad = np.zeros((*lead, per * warp), dtype)
    pad[..., :k] = terms
    lanes = pad.reshape(*lead, per, warp)
    acc = np.zeros((*lead, warp), dtype)
    for j in range(per):
        acc = (acc + lanes[..., j, :]).astype(dtype)
    acc = acc.astype(F)
    offset = warp // 2
    while offset:
        acc = (acc + acc[..., np.arange(warp) ^ offset]).astype(F)
        offset //= 2
    return acc[..., 0]


def _numba32(inputs, warp, how="columns"):
    """y (B × N) in float32 as a warp-per-row kernel computes it: ``columns`` w·x per column;
    ``groups`` Σ q·x over the lane's columns of each group, times the scale, added per group;
    or one of the bugs: ``float16_sums``, ``float16_weights``, ``swapped``, ``no_offset``,
    ``next_group`` (the scale of column k + 1's group), ``ragged_dropped``."""
    w, q, s, x, group = _weights(inputs)
    k = w.shape[1]
    if how == "groups":
        out = np.zeros((x.shape[0], w.shape[0]), F)
        per_lane = np.zeros((x.shape[0], w.shape[0], warp), F)
        for g0 in range(0, k, group):
            cols = np.arange(g0, min(g0 + group, k))
            qx = (q[None, :, cols].astype(F) * x[:, None, cols]).astype(F)       # exact
            part = np.zeros((x.shape[0], w.shape[0], warp), F)
            for j, c in enumerate(cols):
                lane = c % warp
                part[..., lane] = (part[..., lane] + qx[..., j]).astype(F)
            per_lane = (per_lane + (part * s[None, :, g0][..., None]).astype(F)).astype(F)
        offset = warp // 2
        while offset:
            per_lane = (per_lane + per_lane[..., np.arange(warp) ^ offset]).astype(F)
            offset //= 2
        return per_lane[..., 0]
    if how == "float16_weights":
        w = (q.astype(H) * s.astype(H)).astype(F)
    elif how in ("swapped", "no_offset"):
        nib = ch27.unpack_int4(inputs["packed"], 2 * inputs["packed"].shape[1]).astype(np.int64)
        if how == "swapped":
            nib[:, 0::2], nib[:, 1::2] = nib[:, 1::2].copy(), nib[:, 0::2].copy()
        else:
            nib = nib + 8
        w = (nib[:, :k].astype(F) * s).astype(F)
    elif how == "next_group":
        sc = ch27.expand_scales(np.concatenate([inputs["scales"], inputs["scales"][:, -1:]], 1),
                                k + 1, group)[:, 1:].astype(F)
        w = (q.astype(F) * sc).astype(F)
    elif how == "ragged_dropped":
        w = w.copy()
        w[:, (k // group) * group:] = 0
    terms = (w[None, :, :] * x[:, None, :]).astype(F)
    if how == "float16_sums":
        return _lanes_sum(terms.astype(H), warp, H)
    return _lanes_sum(terms, warp)


def _cases(problem):
    return problem.cases() + problem.cases(hidden=True) + problem.cases(hidden=True, seed=9)


def _bound_of(problem, case):
    expected, tol = problem.reference_values(case)
    y = expected["y"].reshape(-1, case.size[-2])
    return y, tol["y"].reshape(y.shape)


@pytest.mark.parametrize("name", ["int8_matvec", "int4_matmul"])
def test_correct_orders_stay_within_the_bound_at_both_warp_sizes(name):
    problem = getattr(ch27, name)
    for case in _cases(problem):
        y, tol = _bound_of(problem, case)
        for warp in (32, 64):
            for how in ("columns", "groups"):
                got = _numba32(case.inputs, warp, how)
                assert np.all(np.abs(got - y) <= tol), (case.label, warp, how)


@pytest.mark.parametrize("name, bugs", [
    ("int8_matvec", ("float16_sums", "float16_weights", "next_group", "ragged_dropped")),
    ("int4_matmul", ("float16_sums", "float16_weights", "next_group", "ragged_dropped",
                     "swapped", "no_offset")),
])
def test_each_plain_bug_misses_the_bound_on_the_visible_cases(name, bugs):
    problem = getattr(ch27, name)
    cases = problem.cases()
    for bug in bugs:
        missed = []
        for case in cases:
            y, tol = _bound_of(problem, case)
            missed.append(bool(np.any(np.abs(_numba32(case.inputs, 32, bug) - y) > tol)))
        assert any(missed), (name, bug)
    # float16 sums are far outside: by more than ten times the bound on the largest case
    y, tol = _bound_of(problem, cases[0])
    assert np.max(np.abs(_numba32(cases[0].inputs, 32, "float16_sums") - y) / tol) > 10


def test_the_bound_is_not_vacuous():
    """γ_c stays below 10^-4 at every size the checks use (CPU and GPU), so an error of 0.01% of
    Σ|w·x| fails; the chain grows with K / 32 and K / G."""
    for problem in (ch27.int8_matvec, ch27.int4_matmul):
        for sizes in (problem.cpu_sizes, problem.gpu_sizes):
            for size in sizes.visible + sizes.hidden:
                assert gamma(ch27.chain(size[-1], 32)) < 1e-4, size
    assert ch27.chain(4096, 128) == 128 + 32 + 24


def test_the_hint_names_swapped_nibbles_and_a_missing_offset():
    problem = ch27.int4_matmul
    case = problem.cases()[0]
    got = _numba32(case.inputs, 32, "swapped")
    assert ch27.specs.diagnose_int4(case.inputs, got.astype(np.float64)) == ch27.specs.NIBBLE_HINT
    got = _numba32(case.inputs, 32, "no_offset")
    assert ch27.specs.diagnose_int4(case.inputs, got.astype(np.float64)) == ch27.specs.OFFSET_HINT
    got = _numba32(case.inputs, 32, "next_group")
    assert ch27.specs.diagnose_int4(case.inputs, got.astype(np.float64)) is None


# ---- cases, samples, launches ----------------------------------------------------------------------

def test_hidden_cases_alternate_warp_sizes_and_draw_groups_and_odd_k():
    for problem in (ch27.int8_matvec, ch27.int4_matmul):
        cases = problem.cases(hidden=True)
        warps = [c.inputs["warp_size"] for c in cases]
        assert (warps == [64, 32] * (len(cases) // 2) + [64] * (len(cases) % 2)) if CPU else True
        drawn = [c for seed in range(20, 26) for c in problem.cases(hidden=True, seed=seed)
                 [len(problem.sizes.hidden):]]
        assert all(c.size[-1] % 2 == 1 for c in drawn)
        assert len({c.inputs["group"] for seed in range(20, 26)
                    for c in problem.cases(hidden=True, seed=seed)}) >= 2
        visible = problem.cases()
        assert any(c.size[-1] % c.inputs["group"] for c in visible)    # a ragged last group
        assert all(c.blocks * c.threads // 32 < c.size[-2] or c.size[-2] <= 4 for c in visible
                   if CPU) or not CPU


def test_the_speed_samples_agree_with_the_whole_spec():
    rng = np.random.default_rng(5)
    for problem, size in ((ch27.int8_matvec, (40, 300)), (ch27.int4_matmul, (3, 40, 300)),
                          (ch27.int4_matmul_triton, (3, 40, 300))):
        inputs = problem.speed_inputs(rng, size)
        expected = problem.spec(**{k: v.astype(np.float64) if getattr(v, "dtype", None) is not None
                                   and v.dtype.kind == "f" else v for k, v in inputs.items()})["y"]
        tol = problem.tolerance(inputs, {"y": expected})["y"]
        idx = np.array([0, 7, 39, 40, 41, 119]) if len(size) == 3 else np.array([0, 7, 39])
        want, allowed = problem.sampled(inputs, idx)
        assert np.allclose(want["y"], expected.reshape(-1)[idx], rtol=1e-12, atol=1e-12)
        assert np.allclose(allowed["y"], tol.reshape(-1)[idx], rtol=1e-12)


def test_the_bytes_count_the_format():
    assert ch27.specs.matvec_bytes((16384, 8192)) == 16384 * 8192 + 2 * 16384 * 64 + 2 * 8192 \
        + 4 * 16384
    assert ch27.specs.matmul_bytes((8, 16384, 8191)) == 16384 * 4096 + 2 * 16384 * 64 \
        + 2 * 8 * 8191 + 4 * 8 * 16384


def test_the_course_kernels_pass_the_visible_checks():
    ch27.int8_matvec.check(ch27.reference_int8_matvec())
    ch27.int4_matmul.check(ch27.reference_int4_matmul())


def test_the_accuracy_table_orders_the_formats():
    rows = {(r["format"], r["group"]): r["error"]
            for r in ch27.quantization_errors(n=64, k=512, group_sizes=(32, 512))}
    assert rows[("float16", 0)] < rows[("int8", 32)] < rows[("int4", 32)]
    assert rows[("int8", 32)] <= rows[("int8", 512)] * 1.2
    out = {(r["format"], r["group"]): r["error"]
           for r in ch27.quantization_errors(n=64, k=512, group_sizes=(32, 512), outlier=20)}
    assert out[("int8", 512)] > 2 * rows[("int8", 512)]       # the outlier's group pays
    assert out[("int8", 32)] < 1.5 * rows[("int8", 32)] + out[("int8", 512)] / 4


# ---- the measuring cell -------------------------------------------------------------------------------

def test_the_chart_says_when_the_h200_run_is_missing_and_draws_one(capsys, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    monkeypatch.setattr(ch27.notebook, "recorded", lambda: None)
    assert ch27.chart() is None
    assert ch27.NOT_RECORDED in capsys.readouterr().out
    rows = [{"label": lab, "n": 64, "k": 128, "batch": b, "ms": 0.01, "gbps": 100.0,
             "roof_ms": 0.005, "right": True}
            for lab in ("int8, Numba (course)", "copy of the int8 bytes") for b in (1, 8)]
    monkeypatch.setattr(ch27.notebook, "recorded",
                        lambda: {"title": "t", "device": "NVIDIA H200", "rows": rows})
    fig = ch27.chart()
    assert fig is not None and len(fig.axes) == 2


def test_measure_needs_a_gpu_in_cpu_mode():
    if not CPU:
        pytest.skip("CPU-mode behaviour")
    with pytest.raises(ag.timing.NeedsGPU):
        ch27.measure()
    with pytest.raises(ag.timing.NeedsGPU):
        ch27.compare_triton(None)


def test_the_measuring_cell_runs_every_kernel_and_checks_each_result(monkeypatch):
    """The GPU measuring cell's launches, run once each in the simulator on a small shape (its
    timer replaced by one call), the Triton launcher in Triton's interpreter: every course
    kernel's result is right, a wrong kernel is marked, and an unknown kind is refused."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    monkeypatch.setattr(timing, "copy_ceiling", lambda nbytes, repeats=0: timing.Stats(
        "copy", 0.5, 1, bytes=nbytes))
    monkeypatch.setattr(ch27.notebook, "speed_shape", lambda size: (2, 64))
    if not CPU:
        pytest.skip("the simulator's run of the measuring cell")
    class Nothing:                      # a "kernel" that stores nothing: y stays NaN
        def __getitem__(self, launch):
            return lambda *args: None
    rows = ch27.measure({"wrong": ("int8", Nothing())}, shapes=((6, 260),), batches=(1, 2),
                        repeats=1)
    right = {(r["label"], r["batch"]): r["right"] for r in rows}
    assert right.pop(("wrong", 1)) is False, rows
    assert all(right.values()), rows
    labels = {r["label"] for r in rows}
    assert {"int8, Numba (course)", "int4, Numba (course)", "float16, Numba (course)",
            "copy of the int4 bytes"} <= labels
    with pytest.raises(ValueError, match="'int4' or 'int4_call', not 'fp32'"):
        ch27.measure({"x": ("fp32", None)}, shapes=((4, 8),))


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """The course's three Numba kernels compile for compute capability 9.0 (real Numba CUDA, no
    GPU) with the exercises' argument types."""
    from ptx import assert_compiles_for_h200
    assert_compiles_for_h200("ch27", (
        "r.cuda, r.float32, r.int32, r.uint64 = cuda, numba.float32, numba.int32, numba.uint64\n"
        "i8 = types.int8[:, ::1]; u8 = types.uint8[:, ::1]; h2 = types.float16[:, ::1]\n"
        "h1 = types.float16[::1]; f1 = types.float32[::1]; f2 = types.float32[:, ::1]\n"
        "g = types.int64\n"
        "sigs = [(r.reference_int8_matvec.__wrapped__(), (i8, h2, h1, g, f1)),\n"
        "        (r.reference_int4_matmul.__wrapped__(), (u8, h2, h2, g, f2)),\n"
        "        (r.fp16_matvec.__wrapped__(), (h2, h1, f1))]\n"), 3)


# ---- 27.4: the int4 product in Triton -----------------------------------------------------------------

TRITON_MISSING = triton_bridge.unavailable_reason()


@pytest.fixture(scope="module")
def triton_kernels():
    """tests/ch27_triton_kernels.py, imported once autograder has chosen the backend."""
    if TRITON_MISSING is not None:
        pytest.skip(TRITON_MISSING)
    import ch27_triton_kernels
    return ch27_triton_kernels


def test_the_triton_bound_covers_any_order_of_the_additions():
    """A sequential float32 sum of every product (the longest chain there is), NumPy's pairwise
    sum and the warp orders stay within 27.4's bound on every case; float16 sums and float16
    weights do not, on the visible cases."""
    problem = ch27.int4_matmul_triton
    for case in _cases(problem):
        y, tol = _bound_of(problem, case)
        w, q, s, x, group = _weights(case.inputs)
        terms = (w[None, :, :] * x[:, None, :]).astype(F)
        seq = np.zeros(terms.shape[:2], F)
        for c in range(terms.shape[2]):
            seq = (seq + terms[..., c]).astype(F)
        for got in (seq, terms.sum(axis=2, dtype=F), _numba32(case.inputs, 32, "groups")):
            assert np.all(np.abs(got - y) <= tol), case.label
    for bug in ("float16_sums", "float16_weights", "swapped", "ragged_dropped"):
        assert any(np.any(np.abs(_numba32(c.inputs, 32, bug) - _bound_of(problem, c)[0])
                          > _bound_of(problem, c)[1]) for c in problem.cases()), bug
    assert ch27.triton_chain(150, 64) == 150 + 3 + 4


def test_the_triton_solution_passes_and_each_plain_bug_fails(triton_kernels):
    problem = ch27.int4_matmul_triton
    problem.check(triton_kernels.launcher("right"))
    problem.check_hidden(triton_kernels.launcher("right"))
    hints = {"swapped_nibbles": ch27.specs.NIBBLE_HINT, "no_offset": ch27.specs.OFFSET_HINT,
             "odd_column_dropped": None, "float16": None}
    for name, hint in hints.items():
        with pytest.raises(ag.CheckFailed) as failed:
            problem.check(triton_kernels.launcher(name))
        if hint:
            assert failed.value.verdict.hint == hint, (name, failed.value.verdict)


def test_the_triton_exercise_has_no_launch_shapes_and_odd_random_sizes():
    problem = ch27.int4_matmul_triton
    cases = problem.cases() + problem.cases(hidden=True)
    assert all(not c.threads and "warp_size" not in c.inputs for c in cases)
    assert all(c.size[-1] % 2 for c in cases[len(problem.cases()) + len(problem.sizes.hidden):])
    assert problem.portability_cases() == [] and problem.kernel_language == "triton"


def test_without_triton_the_checks_skip(monkeypatch, capsys):
    why = "Triton publishes wheels for Linux (x86-64 and Arm64) only"
    monkeypatch.setattr(triton_bridge, "unavailable_reason", lambda: why)
    problem = ch27.int4_matmul_triton
    problem.check(lambda *a: None)
    problem.check_hidden(lambda *a: None)
    problem.check_speed(lambda *a: None)
    out = capsys.readouterr().out
    assert out.count(why) == 3 and "skipped" in out


def test_importing_the_course_never_imports_triton():
    import subprocess
    import sys
    code = ("import autograder, sys; assert 'triton' not in sys.modules; "
            "autograder.problems.ch27.int4_matmul_triton.cases(); print('triton' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "False", out.stderr[-2000:]


def test_tiny_is_the_floor_of_every_bound():
    case = ch27.int8_matvec.cases()[0]
    _, tol = ch27.int8_matvec.reference_values(case)
    assert np.all(tol["y"] >= TINY32)


# ---- on a GPU ------------------------------------------------------------------------------------------

def _bank_kernel(tmp_path, exercise: str, entry: str, name: str):
    """A bank entry's kernel, imported from a file as a learner's cell defines it."""
    import importlib.util
    from pathlib import Path
    source = Path(__file__).parent / "bank" / "ch27_quantization" / exercise / f"{entry}.py"
    path = tmp_path / f"ch27_{entry}.py"
    path.write_text("import numpy as np\nfrom numba import cuda\nimport autograder as ag\n"
                    + source.read_text())
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@pytest.mark.gpu
@pytest.mark.parametrize("exercise, entry, name", [
    ("int8_matvec", "ok_groups_loop", "int8_matvec_kernel"),
    ("int4_matmul", "ok_local_sums_per_batch_row", "int4_matmul_kernel"),
])
def test_on_the_gpu_a_learner_kernel_passes_its_checks_and_speed(tmp_path, exercise, entry, name):
    """On a GPU: a correct learner kernel (the bank's, written as the notebook's solution) passes
    the visible and hidden cases (chip-sized ones included) and the speed test against the course's
    kernel and NumPy."""
    problem = getattr(ch27, exercise)
    kernel = _bank_kernel(tmp_path, exercise, entry, name)
    problem.check(kernel)
    problem.check_hidden(kernel)
    problem.check_speed(kernel)


@pytest.mark.gpu
def test_on_the_gpu_the_triton_kernel_passes_and_the_course_one_is_refused(triton_kernels):
    problem = ch27.int4_matmul_triton
    mine = triton_kernels.launcher("right")
    problem.check(mine)
    problem.check_hidden(mine)
    problem.check_speed(mine)
    with pytest.raises(ag.CheckFailed, match="not yours"):
        problem.check_speed(ch27.reference_int4_triton())
