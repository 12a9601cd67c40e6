"""Chapter 22: is the tolerance the error bound of a float32 a·x + b (fused or not: right; a few
ulps more: wrong)? Do the pieces of chunk_bounds cover any n once? Does the pipeline's check pass
pipelines written several ways and fail, with a sentence that says why, the ones that wait in the
loop, copy on the default stream, make a fixed number of pieces, compute on the host, or hand the
work to the course's kernel? Are the batched problems' inputs what their comments say (empty
problems, a long one), does the speed test's sample agree with the whole spec, does the timeline
measure overlap, do the GPU-only cells say they need a GPU, and does every course kernel compile
for an H200?"""

import numpy as np
import pytest
from numba import cuda

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import assert_judged

ch22 = ag.problems.ch22
CPU = not ag.backend.is_gpu


# ---- the operation's tolerance --------------------------------------------------------------------

def test_tolerance_is_the_error_bound_of_a_float32_axpb():
    rng = np.random.default_rng(3)
    x = ch22.pipeline_inputs(rng, 5000)["x"]
    a, b = np.float32(-37.25), np.float32(0.0123)
    exact = float(a) * x.astype(np.float64) + float(b)
    tol = ch22.axpb_tolerance(x, a, b)
    two_roundings = (a * x + b).astype(np.float32)                          # product, then sum
    fused = (float(a) * x.astype(np.float64) + float(b)).astype(np.float32)  # one rounding
    assert np.all(np.abs(two_roundings - exact) <= tol)
    assert np.all(np.abs(fused - exact) <= tol)
    # Ten ulps of the product off: outside the bound wherever the product dominates.
    off = exact + 10 * 2.0 ** -24 * np.abs(float(a) * x)
    assert np.any(np.abs(off.astype(np.float64) - exact) > tol)
    # float16 arithmetic fails.
    half = (np.float16(a) * x.astype(np.float16) + np.float16(b)).astype(np.float64)
    assert np.any(np.abs(half - exact) > tol)


@pytest.mark.parametrize("n,chunks", [(1, 1), (10, 3), (1000, 7), (97, 12), (12, 12)])
def test_chunk_bounds_cover_n_once_with_pieces_one_apart(n, chunks):
    parts = ch22.chunk_bounds(n, chunks)
    assert len(parts) == chunks and parts[0][0] == 0 and parts[-1][1] == n
    assert all(p[1] == q[0] for p, q in zip(parts, parts[1:]))
    sizes = [stop - start for start, stop in parts]
    assert max(sizes) - min(sizes) <= 1


# ---- 22.1 the pipeline ------------------------------------------------------------------------------

@cuda.jit
def _axpb(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b


@cuda.jit
def _nothing(x, out, a, b):
    pass


@cuda.jit
def _copy(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def _pipeline(wait=None, pieces=None, stream=True, host=False, course=False, launder=False,
              launch_stream=True):
    """A pipeline: right with the defaults, else with one fault (``wait``: 'device' or 'stream'
    after each piece; ``pieces``: a fixed count; no ``stream``: default-stream copies; ``host``:
    NumPy into out after a kernel that stores nothing; ``course``: the course's pipeline)."""
    def pipeline(x, out, a, b, chunks, streams):
        if course:
            return ch22.reference_pipeline(x, out, a, b, chunks, streams)
        n = x.shape[0]
        k = pieces or chunks
        queues = [cuda.stream() for _ in range(streams)]
        for i in range(k):
            lo, hi = i * n // k, (i + 1) * n // k
            q = queues[i % streams]
            # launder: the host computes the piece and sends its result through the device.
            src = (a * x[lo:hi] + b).astype(np.float32) if launder else x[lo:hi]
            d = cuda.to_device(src, stream=q if stream else 0)
            r = cuda.device_array(hi - lo, np.float32)
            kernel = _nothing if host else _copy if launder else _axpb
            grid = (hi - lo + 63) // 64
            (kernel[grid, 64, q] if launch_stream else kernel[grid, 64])(d, r, a, b)
            if not host:
                r.copy_to_host(out[lo:hi], stream=q if stream else 0)
            if wait == "stream":
                q.synchronize()
            elif wait == "device":
                cuda.synchronize()
        cuda.synchronize()
        if host:
            out[:] = a * x + b
    return pipeline


@pytest.mark.parametrize("fault,expected", [
    ({}, None),
    ({"wait": "stream"}, "waited for the stream of piece 0"),
    ({"wait": "device"}, "waited for the device after queuing piece 0"),
    ({"pieces": 3}, "in 3 copies, not in the `chunks` = 7 pieces"),
    ({"stream": False}, "was not queued on a stream"),
    ({"host": True}, "was never the target of a copy back"),
    ({"course": True}, "no kernel of yours ran"),
    ({"launder": True}, "came from a host array that is not a piece of `x`"),
    ({"launch_stream": False}, "1. launch had no stream"),
], ids=["right", "stream-wait", "device-wait", "fixed-pieces", "default-stream", "host-numpy",
        "course-pipeline", "host-result-through-the-device", "default-stream-launch"])
def test_pipeline_check_passes_a_right_pipeline_and_says_what_is_wrong(fault, expected):
    assert_judged(ch22.pipeline, _pipeline(**fault), expected, hidden=False)


def test_a_wait_for_an_older_stream_is_not_a_serial_pipeline():
    """Waiting for the stream a piece will reuse (not the piece just queued) leaves the other
    streams' pieces overlapping: allowed. Waiting once at the end on each stream: allowed."""
    def pipeline(x, out, a, b, chunks, streams):
        n = x.shape[0]
        queues = [cuda.stream() for _ in range(streams)]
        for i in range(chunks):
            lo, hi = i * n // chunks, (i + 1) * n // chunks
            q = queues[i % streams]
            if i >= streams and streams > 1:
                q.synchronize()          # the piece streams ago, on the stream about to be reused
            d = cuda.to_device(x[lo:hi], stream=q)
            r = cuda.device_array(hi - lo, np.float32)
            _axpb[(hi - lo + 63) // 64, 64, q](d, r, a, b)
            r.copy_to_host(out[lo:hi], stream=q)
        for q in queues:
            q.synchronize()
    got, expected, said = ch22.try_pipeline(pipeline, n=300, chunks=7, streams=3)
    assert said is None and np.allclose(got, expected, rtol=1e-6)


def test_an_array_made_on_a_stream_copies_back_on_it_without_saying_so():
    """Numba's rule: an array made by ``cuda.to_device(a, stream=s)`` (or ``device_array(...,
    stream=s)``) copies on ``s`` when no stream is given, so this pipeline is not serial."""
    def once(x, out, a, b, chunks, streams):
        n = x.shape[0]
        queues = [cuda.stream() for _ in range(streams)]
        for i in range(chunks):
            lo, hi = i * n // chunks, (i + 1) * n // chunks
            q = queues[i % streams]
            d = cuda.to_device(x[lo:hi], stream=q)
            r = cuda.device_array(hi - lo, np.float32, stream=q)
            _axpb[(hi - lo + 63) // 64, 64, q](d, r, a, b)
            r.copy_to_host(out[lo:hi])
        cuda.synchronize()
    got, expected, said = ch22.try_pipeline(once, n=300, chunks=7, streams=3)
    assert said is None and np.allclose(got, expected, rtol=1e-6)


def test_the_course_pipeline_is_right_in_any_shape():
    for n, chunks, streams in ((1, 1, 1), (1000, 7, 3), (37, 5, 9), (64, 16, 2)):
        inputs = ch22.pipeline_inputs(np.random.default_rng(n), n)
        x = cuda.pinned_array(n, np.float32)
        x[:] = inputs["x"]
        out = np.full(n, np.nan, np.float32)
        ch22.reference_pipeline(x, out, inputs["a"], inputs["b"], chunks, streams)
        exact = float(inputs["a"]) * x.astype(np.float64) + float(inputs["b"])
        assert np.all(np.abs(out - exact) <= ch22.axpb_tolerance(x, inputs["a"], inputs["b"]))


def test_pipeline_cases_have_pieces_and_streams_of_every_kind():
    visible = ch22.pipeline.cases()
    assert [(c.size, c.inputs["chunks"], c.inputs["streams"]) for c in visible] == [
        (1000, 7, 3), (37, 5, 2), (1, 1, 1)]
    hidden = ch22.pipeline.cases(hidden=True, seed=5)
    assert max(c.size for c in hidden) >= 4 * 1000
    assert all(1 <= c.inputs["chunks"] <= min(c.size, 12) for c in hidden)
    assert any(c.size % c.inputs["chunks"] for c in hidden)


# ---- the timeline ----------------------------------------------------------------------------------

def _rows(spans):
    return [{"chunk": i, "stream": s, "stage": st, "start_ms": a, "end_ms": b}
            for i, (s, st, a, b) in enumerate(spans)]


def test_overlap_is_zero_for_a_serial_timeline_and_counts_stacked_stages():
    serial = _rows([(0, "copy in", 0, 4), (0, "kernel", 4, 6), (0, "copy out", 6, 10)])
    assert ch22.overlap(serial) == {"span_ms": 10, "busy_ms": 10, "overlapped": 0.0}
    piped = _rows([(0, "copy in", 0, 2), (1, "copy in", 2, 4), (0, "kernel", 2, 3),
                   (0, "copy out", 3, 5), (1, "kernel", 4, 5), (1, "copy out", 5, 7)])
    o = ch22.overlap(piped)
    assert o["span_ms"] == 7 and o["busy_ms"] == 10 and o["overlapped"] == pytest.approx(3 / 7)
    ax = ch22.draw_timeline(piped, title="test")
    assert len(ax.patches) == 6 and "43%" in ax.get_title()
    import matplotlib.pyplot as plt
    plt.close("all")


@pytest.mark.skipif(not CPU, reason="the stamps of CPU mode's single timeline")
def test_cpu_mode_stamps_a_pipeline_in_order_with_no_overlap():
    """CPU mode's stream is one timeline: the course's pipeline's stages come one after another,
    so the chart it would draw shows no overlap, as the notebook says."""
    n = 200
    x = cuda.pinned_array(n, np.float32)
    x[:] = 1
    out = cuda.pinned_array(n, np.float32)
    stamps = []
    ch22.reference_pipeline(x, out, np.float32(2), np.float32(1), 4, 2, stamps=stamps)
    rows = ch22.stamps_to_rows(stamps)
    assert len(rows) == 12 and np.all(out == 3)
    assert ch22.overlap(rows)["overlapped"] == 0.0
    assert all(r["end_ms"] >= r["start_ms"] >= 0 for r in rows)


# ---- 22.2 and 22.3 ----------------------------------------------------------------------------------

def test_batched_inputs_have_empty_problems_and_long_ones():
    case = ch22.batched.cases()[0]
    lengths = np.diff(case.inputs["offsets"])
    assert case.inputs["offsets"][0] == 0 and case.inputs["offsets"][-1] == 300
    assert lengths[0] == 0 and lengths.max() > 4 * 32 and np.all(lengths >= 0)
    hidden = ch22.batched.cases(hidden=True, seed=1)
    longest = max(np.diff(c.inputs["offsets"]).max() for c in hidden)
    assert longest > 2 * lengths.max()


def test_batched_sample_agrees_with_the_whole_spec():
    inputs = ch22.batched_inputs(np.random.default_rng(4), (40, 3001))
    whole = ch22.batched.spec(**{k: (v.astype(np.float64) if v.dtype.kind == "f" else v)
                                 for k, v in inputs.items()})["out"]
    idx = np.random.default_rng(0).choice(3001, 500, replace=False)
    expected, tol = ch22.batched_sample(inputs, idx)
    assert np.array_equal(expected["out"], whole[idx])
    assert np.all(tol["out"] > 0)


@cuda.jit
def _batched_no_loop(x, offsets, a, b, out):
    p = cuda.blockIdx.x
    j = offsets[p] + cuda.threadIdx.x
    if j < offsets[p + 1]:
        out[j] = a[p] * x[j] + b[p]


@cuda.jit
def _ilp_one_each(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b


@cuda.jit
def _touch_batched(x, offsets, a, b, out):
    p = cuda.blockIdx.x
    j = offsets[p] + cuda.threadIdx.x
    while j < offsets[p + 1]:
        a[p] * x[j] + b[p]          # read, never stored
        j += cuda.blockDim.x


class _LooksLikeAKernel:
    """Launches a kernel that reads everything and stores nothing, then writes NumPy's answer."""

    def __getitem__(self, config):
        def run(x, offsets, a, b, out):
            _touch_batched[config[0], config[1]](x, offsets, a, b, out)
            lengths = np.diff(np.asarray(offsets))
            host = np.repeat(np.asarray(a), lengths) * np.asarray(x) + np.repeat(
                np.asarray(b), lengths)
            out.copy_to_device(host.astype(np.float32))
        return run


@pytest.mark.skipif(not CPU, reason="the data-flow record of CPU mode")
def test_batched_numpy_behind_a_kernel_that_stores_nothing_fails():
    assert_judged(ch22.batched, _LooksLikeAKernel(), "", hidden=False)


def test_course_kernels_pass_and_one_element_per_thread_fails():
    assert_judged(ch22.batched, ch22.reference_batched(), None, hidden=False)
    assert_judged(ch22.batched, _batched_no_loop, "never written", hidden=False)
    assert_judged(ch22.ilp, ch22.reference_ilp(), None, hidden=False)
    assert_judged(ch22.ilp, _ilp_one_each, "never written", hidden=False)
    assert ch22.ilp_blocks(1000, 32) == 8 and ch22.ilp_blocks(1, 128) == 1


# ---- what needs a GPU, what is recorded, what compiles --------------------------------------------

@pytest.mark.skipif(not CPU, reason="CPU mode's answers")
def test_gpu_cells_say_they_need_a_gpu_and_cpu_mode_draws_the_recorded_runs():
    for fn in (ch22.measure, ch22.timeline, ch22.launch_overhead, ch22.measure_pipeline,
               ch22.call_costs):
        with pytest.raises(ag.timing.NeedsGPU):
            fn()
    import matplotlib
    matplotlib.use("Agg")
    drawn = ch22.show_recorded_timelines()         # the course's H200 run, shipped
    assert "H200" in drawn["device"] and [r["label"] for r in drawn["runs"]] == [
        "serial: copy in, kernel, copy out", "8 chunks over 4 streams"]
    assert ag.experiments.recorded(f"h200_{ch22.CHART}")["rows"]     # what the cell draws
    assert ch22.chart()["name"] == ch22.CHART
    rows = [{"label": "a", "ms": 1.0, "gbps": 1.0, "right": True, "group": "ilp"}]
    assert ch22.chart(rows)["rows"] == [{"label": "a", "ms": 1.0, "right": True}]


def _call_row(op, n, label, device, e2e):
    return {"op": op, "n": n, "label": label, "device_us": device, "host_us": e2e - device,
            "end_to_end_us": e2e}


def test_call_bars_keep_one_size_the_two_launch_floors_and_no_failed_or_cupy_row():
    rows = [_call_row("launch", 0, "empty kernel, Numba: k[1, 32](a, b)", 3, 60),
            _call_row("launch", 0, "empty kernel, Numba, configured once: kc(a, b)", 3, 58),
            _call_row("launch", 0, "empty kernel, bound launch (one cuLaunchKernel)", 3, 15),
            _call_row("sum", 8, "exercise launch (zero kernel + reference)", 5, 100),
            _call_row("sum", 8, "course helper sum_on_device (memset + bound launch)", 5, 40),
            _call_row("sum", 16, "course helper sum_on_device (memset + bound launch)", 9, 44),
            _call_row("sum", 8, "torch.sum (CUB)", 5, 30),
            _call_row("sum", 8, "cupy.sum", 5, 35),
            {"op": "scan", "n": 8, "label": "CUB DeviceScan::InclusiveSum (cuda.compute)",
             "error": "ImportError('cuda.compute')"}]
    bars = ch22.call_bars(rows, 8)
    assert [(b["op"], b["kind"], b["end_to_end_us"]) for b in bars] == [
        ("launch", "launch", 60), ("launch", "launch", 15), ("sum", "exercise launch", 100),
        ("sum", "course helper", 40), ("sum", "PyTorch", 30)]
    assert [b["end_to_end_us"] for b in ch22.call_bars(rows, 16)][2:] == [44]
    table = ch22.calls_table(rows)
    assert "ImportError" in table and "| sum | 16 | course helper" in table


def test_the_recorded_calls_are_drawn_and_the_text_quotes_them():
    import matplotlib
    matplotlib.use("Agg")
    kept = ch22.show_calls()                       # the course's H200 run, shipped
    assert "H200" in kept["device"] and kept["versions"]["numba-cuda"]
    for n in ch22.CALL_SIZES:
        bars = ch22.call_bars(kept["rows"], n)
        for op in ("sum", "scan", "histogram"):
            assert {b["kind"] for b in bars if b["op"] == op} == {
                "exercise launch", "course helper", "PyTorch", "CUB"}
    e2e = {(r["op"], r["n"], ch22.call_kind(r["label"])): r["end_to_end_us"]
           for r in kept["rows"] if "error" not in r}
    big, small = 1 << 24, 1 << 18
    from pathlib import Path
    text = (Path(__file__).parents[1] / "source" / "ch22_advanced_practices"
            / "ch22_advanced_practices.py").read_text()
    quoted = {"the sum helper takes {:.0f} µs": e2e["sum", big, "course helper"],
              "(the exercise launch {:.0f}, `torch.sum`": e2e["sum", big, "exercise launch"],
              "`torch.sum` {:.0f})": e2e["sum", big, "PyTorch"],
              "the scan helper {:.0f} µs": e2e["scan", big, "course helper"],
              "(the exercise launch {:.0f}, `torch.cumsum`": e2e["scan", big, "exercise launch"],
              "`torch.cumsum` {:.0f})": e2e["scan", big, "PyTorch"],
              "{:.0f} µs at 2^24 against": e2e["histogram", big, "PyTorch"],
              "against {:.0f} for the course's histogram": e2e["histogram", big, "course helper"],
              "takes {:.0f} µs for": e2e["scan", small, "exercise launch"]}
    for pattern, value in quoted.items():
        assert pattern.format(value) in " ".join(text.replace("#", " ").split()), pattern
    text = " ".join(text.replace("#", " ").split())
    summed = e2e["sum", big, "course helper"] / e2e["sum", big, "PyTorch"]
    assert f"the sum {summed:.1f} times PyTorch's time" in text
    scanned = e2e["scan", big, "course helper"] / e2e["scan", big, "PyTorch"]
    assert abs(scanned - 1) < 0.05 and "the scan level with it" in text
    launch = next(r["host_us"] for r in kept["rows"] if r["label"].startswith("empty kernel, Numba: "))
    assert f"launch cost Python {launch:.0f} µs in this run" in text


@pytest.mark.skipif(not CPU, reason="CPU mode, its timing opened by hand")
def test_call_costs_times_each_call_and_a_failing_extra_row_keeps_its_error(monkeypatch):
    # the simulator's times mean nothing: each call is made once, and what is checked is which
    # calls are made and kept
    from autograder.problems import ch09, ch10
    monkeypatch.setattr(ag.timing, "require_gpu", lambda *a, **k: None)

    def once(fn, repeats):
        fn()
        return {"device_us": 1.0, "host_us": 2.0, "end_to_end_us": 3.0}
    monkeypatch.setattr(ag.timing, "time_call", once)
    for chapter in (ch09, ch10):
        monkeypatch.setattr(chapter, "speed_shape", lambda n: (2, 64))
    made = []

    def more(n, arrays):
        made.append((n, sorted(arrays)))
        return [("sum", "CUB stand-in", lambda: lambda: made.append("called")),
                ("scan", "CUB that fails to build", lambda: 1 / 0)]
    rows = ch22.call_costs(sizes=(300,), repeats=1, more=more)["rows"]
    assert [(r["op"], ch22.call_kind(r["label"])) for r in rows[:9]] == [
        ("launch", "launch")] * 3 + [(op, kind) for op in ("sum", "scan", "histogram")
                                     for kind in ("exercise launch", "course helper")]
    assert all(r["n"] == 300 and r["end_to_end_us"] == 3.0 for r in rows[3:9])
    assert made[0] == (300, ["data", "hist", "out", "x", "y"]) and "called" in made
    assert rows[-2]["label"] == "CUB stand-in" and "error" not in rows[-2]
    assert rows[-1]["label"] == "CUB that fails to build"
    assert "ZeroDivisionError" in rows[-1]["error"]


@pytest.mark.skipif(CPU, reason="times calls on a GPU")
def test_call_costs_times_every_course_call_on_a_gpu():
    rows = ch22.call_costs(sizes=(1 << 16,), repeats=3)["rows"]
    course = [r for r in rows if ch22.call_kind(r["label"]) in ("launch", "exercise launch",
                                                                  "course helper")]
    assert len(course) == 9 and all("error" not in r for r in course), course
    assert all(r["device_us"] > 0 and r["host_us"] > 0 and r["end_to_end_us"] > 0 for r in course)


def test_cpu_mode_table_names_every_call_the_chapter_uses(capsys):
    calls = " ".join(call for call, _, _ in ch22.cpu_mode_table())
    for name in ("cuda.stream", "to_device", "copy_to_host", "pinned_array", "mapped_array",
                 "managed_array", "event"):
        assert name in calls
    ch22.show_cpu_mode()
    out = capsys.readouterr().out
    assert "cuda.pinned_array(4): a " in out


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    assert_compiles_for_h200("ch22", (
        "r.cuda, r.float32 = cuda, numba.float32\n"
        "f = types.float32[::1]; i = types.int64[::1]; s = types.float32\n"
        "k = r._axpb_kernels.__wrapped__()\n"
        "sigs = [(k['axpb'], (f, f, s, s)), (k['rounds'], (f, f, s, s, types.int64)),\n"
        "        (k['batched'], (f, i, f, f, f)), (k['ilp'], (f, f, s, s)),\n"
        "        (k['one_each'], (f, f, s, s))]\n"), 5)
