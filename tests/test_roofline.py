"""Are kernels placed right on the roofline (intensity, roof, fraction, ridge), does CPU mode show
the H200 reference with a note, and do the step and size plots draw the numbers they are given?"""

import base64
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

import autograder as ag
import autograder.visual.roofline as roof
from autograder.timing import Stats
from autograder.visual import plots
from autograder.visual.roofline import DeviceLimits

TOY = DeviceLimits("toy GPU", peak_flops=1e12, bandwidth=1e11)   # ridge at 10 FLOP/byte
CPU_ONLY = pytest.mark.skipif(ag.backend.is_gpu, reason="checks CPU-mode behaviour")


def _png_of(html: str) -> bytes:
    data = re.search(r'src="data:image/png;base64,([^"]+)"', html).group(1)
    return base64.b64decode(data)


# ---- the numbers --------------------------------------------------------------------------------

def test_h200_reference_is_what_the_course_measured(repo_root):
    """Are the reference limits those of docs/bench-h200.json (FP32 peak, copy ceiling)?"""
    with open(os.path.join(repo_root, "docs", "bench-h200.json")) as f:
        bench = json.load(f)
    assert roof.H200.peak_flops == pytest.approx(bench["peak_fp32_flops"], rel=1e-3)
    assert roof.H200.bandwidth == pytest.approx(bench["vector_add"]["ceiling"]["gbps"] * 1e9,
                                                rel=1e-3)
    assert roof.H200.name == bench["device"]["name"]
    assert roof.H200.ridge == pytest.approx(66.908e12 / 4269e9)


def test_points_are_placed_under_the_right_roof():
    """Memory-bound points are judged against intensity × bandwidth, compute-bound ones against
    the peak; the fraction is achieved / roof there."""
    points = roof.place([
        dict(label="low", flops=1e9, bytes=1e9, seconds=0.02),       # I = 1: roof 1e11
        dict(label="high", flops=1e11, bytes=1e9, ms=200.0),          # I = 100: roof 1e12
        dict(label="untimed", flops=5e9, bytes=1e9),                  # I = 5: roof 5e11
    ], TOY)
    low, high, untimed = points
    assert (low["intensity"], low["roof"], low["bound"]) == (1.0, 1e11, "memory")
    assert low["achieved"] == pytest.approx(5e10) and low["fraction"] == pytest.approx(0.5)
    assert low["gbps"] == pytest.approx(50.0)
    assert (high["roof"], high["bound"]) == (1e12, "compute")
    assert high["achieved"] == pytest.approx(5e11) and high["fraction"] == pytest.approx(0.5)
    assert untimed["roof"] == pytest.approx(5e11) and "achieved" not in untimed


def test_stats_and_dicts_make_the_same_point():
    s = Stats("saxpy", median_ms=2.0, runs=20, bytes=12_000_000, flops=2_000_000)
    from_stats, = roof.place([s], TOY)
    from_dict, = roof.place([dict(label="saxpy", flops=2e6, bytes=12e6, seconds=2e-3)], TOY)
    for key in ("intensity", "roof", "achieved", "fraction"):
        assert from_stats[key] == pytest.approx(from_dict[key])
    with pytest.raises(ValueError, match="bytes"):
        roof.place([dict(label="x", flops=1)], TOY)


def test_the_plot_draws_roof_ridge_and_labelled_points():
    r = roof.roofline([dict(label="low", flops=1e9, bytes=1e9, seconds=0.02),
                       dict(label="high", flops=1e11, bytes=1e9, seconds=0.2)], device=TOY)
    ax = r.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    roof_line = max(ax.get_lines(), key=lambda line: len(line.get_xdata()))
    x, y = np.asarray(roof_line.get_xdata()), np.asarray(roof_line.get_ydata())
    np.testing.assert_allclose(y, np.minimum(1e12, x * 1e11) / 1e9)      # GFLOP/s
    ridge = [line for line in ax.get_lines() if len(set(line.get_xdata())) == 1
             and line.get_xdata()[0] == pytest.approx(10.0)]
    assert ridge, "no vertical line at the ridge point"
    texts = [t.get_text() for t in ax.texts]
    assert any("ridge: 10 FLOP/byte" in t for t in texts)
    assert any(t.startswith("low\n50 GFLOP/s, 50% of the roof") for t in texts)
    assert any(t.startswith("high\n500 GFLOP/s, 50% of the roof") for t in texts)
    dots = sorted((float(line.get_xdata()[0]), float(line.get_ydata()[0]))
                  for line in ax.get_lines() if len(line.get_xdata()) == 1)
    assert dots == [pytest.approx((1.0, 50.0)), pytest.approx((100.0, 500.0))]


@CPU_ONLY
def test_cpu_mode_shows_the_h200_with_a_note():
    """In CPU mode, is it the named reference GPU, with a note that points need a GPU, rendered
    as a PNG inside the roofline's classes (and as text without a frontend)?"""
    r = roof.for_problem("saxpy")
    assert r.limits is roof.H200
    assert "needs a GPU" in r.note and "H200" in r.note
    html = r._repr_html_()
    assert html.startswith('<div class="aag-visual aag-visual-roofline">')
    assert _png_of(html).startswith(b"\x89PNG")
    point, = r.points
    assert point["intensity"] == pytest.approx(2 / 12)
    assert point["roof"] == pytest.approx(roof.H200.bandwidth / 6)
    assert "saxpy" in repr(r) and "not timed: needs a GPU" in repr(r)
    with pytest.raises(ag.timing.NeedsGPU):
        roof.measure("saxpy", kernel=None)


def test_problems_by_name_and_at_a_time():
    p = roof.problem_point("ch01.saxpy", seconds=1e-3, size=1000)
    assert (p["flops"], p["bytes"], p["label"]) == (2000, 12000, "saxpy")
    r = roof.for_problem(ag.problems.ch01.saxpy, seconds=1e-3, size=1000, device="H200")
    assert r.points[0]["achieved"] == pytest.approx(2e6)
    predicted = roof.for_problem("saxpy", device="H200")     # a prediction, on any machine
    assert "(not timed)" in repr(predicted) and not predicted.note
    with pytest.raises(ValueError, match="no FLOP and byte counts"):
        roof.problem_point("amdahl")
    with pytest.raises(KeyError):
        roof.problem_point("no_such_problem")


def test_a_copy_has_no_place_on_a_flop_roofline():
    r = roof.roofline([dict(label="transpose", flops=0, bytes=8e8, ms=0.25)], device=TOY)
    assert "transpose does no arithmetic" in r.note and "3,200 GB/s" in r.note
    assert not [t for t in r.axes.texts if t.get_text().startswith("transpose")]


def test_the_module_itself_can_be_called():
    """`ag.visual.roofline` may be the module: calling it draws a roofline."""
    r = roof([dict(label="k", flops=1e9, bytes=1e9, seconds=1.0)], device=TOY)
    assert isinstance(r, roof.Roofline) and r.limits is TOY


def test_no_second_copy_through_pyplot():
    """Figures are not registered with pyplot, so the inline backend cannot show them twice."""
    import matplotlib.pyplot as plt
    before = plt.get_fignums()
    roof.roofline([], device=TOY)
    plots.speedup_steps([("a", 2.0), ("b", 1.0)])
    assert plt.get_fignums() == before


@pytest.mark.gpu
def test_measured_on_this_gpu():
    """On a GPU: this GPU's own limits, saxpy placed near the memory roof, a wrong kernel marked."""
    from numba import cuda

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit
    def wrong(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] + y[i]

    r = roof.for_problem("saxpy", kernel=saxpy, size=1 << 24)
    assert r.limits.measured_here and r.limits.bandwidth > 1e11
    point, = r.points
    assert point["right"] and 0.2 < point["fraction"] < 1.15
    bad = roof.measure("saxpy", wrong, size=1 << 20)
    assert bad["right"] is False


# ---- speedup per step, time against size ---------------------------------------------------------

MATMUL = {"naive": Stats("n", 100.5, 10, flops=2 * 4096 ** 3),
          "tiled": Stats("t", 27.25, 10, flops=2 * 4096 ** 3),
          "register tiled": Stats("r", 4.756, 10, flops=2 * 4096 ** 3),
          "cuBLAS (CuPy)": Stats("c", 2.678, 10, flops=2 * 4096 ** 3)}


def test_speedup_steps_bars_speedups_and_reference():
    """Bars are the steps' times, the reference (named by label) becomes a line and leaves the
    steps, and the speedups over the first and the previous step are right."""
    v = plots.speedup_steps(MATMUL, reference="cuBLAS (CuPy)")
    ax = v.axes
    heights = [patch.get_height() for patch in ax.patches]
    assert heights == pytest.approx([100.5, 27.25, 4.756])
    assert [line.get_ydata()[0] for line in ax.get_lines()] == pytest.approx([2.678])
    labels = [t.get_text() for t in ax.texts]
    assert labels[1].splitlines()[:2] == ["27.2 ms", "3.7×"]
    assert labels[2].splitlines()[1] == "21×" and "28,898 GFLOP/s" in labels[2]
    rows = v.text.splitlines()
    register = next(r for r in rows if r.startswith("register tiled"))
    assert "21.13×" in register and "5.73×" in register          # vs first, vs previous
    assert ax.get_yscale() == "log"                                # times span > 30×
    assert 'class="aag-visual aag-visual-plot"' in v._repr_html_()
    with pytest.raises(ValueError, match="not one of the rows"):
        plots.speedup_steps(MATMUL, reference="cuBLAS")


def test_speedup_steps_reads_chapter_8_rows():
    """ch08.measure's rows (the copy last), a model's bounds, and a wrong kernel marked."""
    rows = [{"label": "basic", "ms": 1.264, "gbps": 855.0, "right": True},
            {"label": "tiled", "ms": 1.916, "gbps": 564.0, "right": True},
            {"label": "register tiled", "ms": 0.685, "gbps": 1578.0, "right": False},
            {"label": "copy ceiling (CuPy copyto)", "ms": 0.257, "gbps": 4200.0, "right": True}]
    v = plots.speedup_steps(rows[:-1], reference=rows[-1], over="previous",
                            bounds={"basic": 0.4, "tiled": 0.3})
    ax = v.axes
    assert len(ax.patches) == 3 and ax.patches[2].get_hatch() == "//"
    texts = [t.get_text() for t in ax.texts]
    assert texts[1].splitlines()[1] == "0.66×"                    # slower than the step before
    assert texts[2].splitlines()[1] == "2.8×" and texts[2].endswith("WRONG")
    assert "855 GB/s" in texts[0]
    bounds = [c for c in ax.collections if c.get_label() == "bound (model)"]
    assert bounds and sorted(s[0][1] for s in bounds[0].get_segments()) == [0.3, 0.4]
    assert ax.get_yscale() == "linear"


def test_time_vs_size_wide_rows_as_copy_cost_makes_them():
    rows = ag.experiments.recorded("h200_copy_cost")["rows"]
    v = plots.time_vs_size(rows, columns={"kernel_ms": "GPU kernel only", "numpy_ms": "NumPy"})
    ax = v.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"GPU kernel only", "NumPy"}
    np.testing.assert_allclose(lines["NumPy"].get_xdata(), [r["n"] for r in rows])
    np.testing.assert_allclose(lines["NumPy"].get_ydata(), [r["numpy_ms"] for r in rows])
    gbps = plots.time_vs_size(rows, columns=["kernel_ms"], y="gbps", bytes=lambda n: 12 * n,
                              reference=4269.0)
    line = gbps.axes.get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(),
                               [12 * r["n"] / (r["kernel_ms"] * 1e-3) / 1e9 for r in rows])
    assert gbps.axes.get_lines()[-1].get_ydata()[0] == 4269.0
    with pytest.raises(ValueError, match="needs bytes"):
        plots.time_vs_size(rows, columns=["kernel_ms"], y="gbps")


def test_time_vs_size_long_rows_one_line_per_kernel():
    rows = [{"label": k, "n": n, "ms": n / s} for k, s in (("a", 1e6), ("b", 2e6))
            for n in (1 << 20, 1 << 10, 1 << 15)]
    v = plots.time_vs_size(rows, y="gbps", bytes=ag.problems.ch01.saxpy)
    lines = {line.get_label(): line for line in v.axes.get_lines()}
    assert list(lines["a"].get_xdata()) == [1 << 10, 1 << 15, 1 << 20]     # sorted by size
    np.testing.assert_allclose(lines["b"].get_ydata(), 12 * 2e6 * 1e3 / 1e9)


# ---- the chapters' measuring cells: recorded on the course's GPU, drawn without one ------------

def test_steps_records_what_it_draws_and_draws_it_back(tmp_path, monkeypatch):
    """With AAG_RECORD set, a measuring cell's rows are written with the device and versions, and
    the recorded file draws the same bars, reference line and bounds as the live measurement."""
    from autograder.machine import facts

    monkeypatch.setattr(facts, "gpu_facts", lambda: {"name": "NVIDIA H200", "sms": 132})
    monkeypatch.setenv("AAG_RECORD", str(tmp_path))
    rows = [{"label": "basic", "ms": 1.25, "gbps": 855.0, "right": np.bool_(True)},
            {"label": "fast", "ms": 0.5, "gbps": 2100.0, "right": np.bool_(False)}]
    live = ag.experiments.steps("ch99_test", rows, reference=MATMUL["cuBLAS (CuPy)"],
                                bounds={"basic": np.float64(0.4)}, title="Toy")
    kept = json.loads((tmp_path / "h200_ch99_test.json").read_text())
    assert kept["device"] == "NVIDIA H200" and "numpy" in kept["versions"]
    assert kept["rows"][1]["right"] is False and kept["bounds"] == {"basic": 0.4}
    assert kept["reference"][0]["ms"] == 2.678

    monkeypatch.setattr(ag.experiments, "recorded", lambda name: json.loads(
        (tmp_path / f"{name}.json").read_text()))
    again = ag.experiments.steps("ch99_test")
    for v in (live, again):
        assert [p.get_height() for p in v.axes.patches] == [1.25, 0.5]
        assert v.axes.patches[1].get_hatch() == "//"                 # the wrong one, hatched
        assert [line.get_ydata()[0] for line in v.axes.get_lines()] == [2.678]
    assert "measured by the course on NVIDIA H200" in again.axes.get_title()
    assert "Toy" in live.axes.get_title()
    assert ag.experiments._slug("NVIDIA H200 NVL") == "h200_nvl"


# Chapters whose measuring cell names its picture through its package: steps(**chNN.chart())
CHART_CHAPTERS = sorted({
    m for path in (Path(__file__).resolve().parents[1] / "source").glob("ch*/ch*.py")
    for m in re.findall(r"ag\.experiments\.steps\(\*\*(ch\d\d[a-z]?)\.chart\(\)\)", path.read_text())})


def test_every_measuring_cell_has_its_recorded_h200_run(repo_root):
    """Each name a chapter draws in CPU mode ships as autograder/problems/chNN/h200_<name>.json, measured
    on an H200 with its versions, with at least two steps."""
    names = set()
    for path in sorted((Path(repo_root) / "source").glob("ch*/ch*.py")):
        text = path.read_text()
        names |= set(re.findall(r'ag\.experiments\.steps\("([a-z0-9_]+)"\)', text))
        # A chapter whose cell names its picture through its package: steps(**chNN.chart())
    assert names, "no chapter draws a recorded measurement"
    names |= {getattr(ag.problems, chapter).chart()["name"] for chapter in CHART_CHAPTERS}
    assert {"ch13_measure", "ch14_measure", "ch15_measure", "ch16_measure"} <= names
    for name in sorted(names):
        kept = ag.experiments.recorded(f"h200_{name}")
        assert "H200" in kept["device"] and kept["versions"]["numba-cuda"], name
        assert len(kept["rows"]) >= 2 and all(r["ms"] > 0 for r in kept["rows"]), name


@pytest.mark.parametrize("chapter", CHART_CHAPTERS)
def test_a_recorded_chart_is_what_the_cell_would_draw_from_those_rows(chapter):
    """The course's H200 run of a chapter's measuring cell, drawn in CPU mode, has the bars and the
    vendor's line that the cell's own ``chart`` makes of the same rows on a GPU: a label renamed
    since the recording would lose its vendor line or a bar."""
    c = getattr(ag.problems, chapter)
    name = c.chart()["name"]
    kept = ag.experiments.recorded(f"h200_{name}")
    rows = kept["rows"] + kept["reference"]          # as measure() returned them
    live = c.chart([r for r in rows if r["label"] != "copy of the least bytes a BFS moves"],
                   **({"copy_ms": kept["reference"][0]["ms"]} if chapter == "ch15" else {}))
    drawn, again = ag.experiments.steps(**c.chart()), ag.experiments.steps(**live)
    assert [p.get_height() for p in drawn.axes.patches] == [
        p.get_height() for p in again.axes.patches] != []
    assert [line.get_ydata()[0] for line in drawn.axes.get_lines()] == [
        line.get_ydata()[0] for line in again.axes.get_lines()]
    assert len(drawn.axes.get_lines()) == len(kept["reference"])      # the vendor's, if any
    assert all(r["right"] for r in kept["rows"] + kept["reference"] if "right" in r)
