"""Does the timing harness refuse to time the simulator, and cache CPU baselines per machine?"""

import re

import pytest

import autograder as ag
import nbgrader_helpers as h
from autograder import timing
from autograder.grading import speed


@pytest.mark.skipif(ag.backend.is_gpu, reason="checks CPU-mode behaviour")
def test_gpu_timing_refuses_in_cpu_mode():
    """Does asking for GPU timing in CPU mode raise NeedsGPU with the reason, not a fake number?"""
    with pytest.raises(timing.NeedsGPU, match="needs a GPU"):
        timing.time_gpu("x", lambda i: None)


@pytest.mark.skipif(ag.backend.is_gpu, reason="checks CPU-mode behaviour")
def test_speed_cell_worth_follows_instructor_setting(monkeypatch, capsys):
    """Does a speed cell in CPU mode pass with a note by default and fail when set to 'zero'?"""
    from submissions import grid_stride_ok
    p = ag.problems.ch02.vector_add_grid_stride
    monkeypatch.delenv("AAG_SPEED_WITHOUT_GPU", raising=False)
    p.check_speed(grid_stride_ok)
    assert "needs a GPU" in capsys.readouterr().out
    monkeypatch.setenv("AAG_SPEED_WITHOUT_GPU", "zero")
    with pytest.raises(ag.CheckFailed, match="needs a GPU"):
        p.check_speed(grid_stride_ok)


def test_cpu_baseline_is_cached(tmp_path, monkeypatch):
    """Is a CPU baseline measured once per machine and then read back, not re-run?"""
    monkeypatch.setenv("AAG_CACHE_DIR", str(tmp_path))
    calls = []
    first = timing.time_cpu("t", lambda: calls.append(1), repeats=3, cache_key="unit-test|1")
    assert len(calls) == 4  # one warm-up and three timed
    second = timing.time_cpu("t", lambda: calls.append(1), repeats=3, cache_key="unit-test|1")
    assert len(calls) == 4 and second.median_ms == first.median_ms
    timing.time_cpu("t", lambda: calls.append(1), repeats=3, cache_key="unit-test|2")
    assert len(calls) == 8


def test_speed_bars_can_be_recalibrated(tmp_path, monkeypatch):
    """Does an instructor's speed_bars.json replace the shipped bar for that problem only?"""
    p = ag.problems.ch02.vector_add_grid_stride
    path = tmp_path / "bars.json"
    path.write_text('{"vector_add_grid_stride": {"min_fraction_of_reference": 0.5, '
                    '"baseline": "parallel", "min_speedup": 3.0}}')
    monkeypatch.setenv("AAG_SPEED_BARS", str(path))
    bar = speed.speed_bar(p)
    assert (bar.min_fraction_of_reference, bar.baseline, bar.min_speedup) == (0.5, "parallel", 3.0)
    monkeypatch.delenv("AAG_SPEED_BARS")
    assert speed.speed_bar(p) == p.speed


def test_speed_without_gpu_has_one_rule(monkeypatch):
    """Each place that grades a speed cell without a GPU has its default (an instructor's
    autograde: zero; a learner's self-grade and notebook: not applicable), an instructor's setting
    beats the default, the environment variable beats both, and a typo is an error."""
    from autograder.core.spec import speed_without_gpu
    monkeypatch.delenv("AAG_SPEED_WITHOUT_GPU", raising=False)
    assert speed_without_gpu("autograde") == "zero"
    assert speed_without_gpu("autograde", "full") == "full"
    assert speed_without_gpu("autograde", "defer") == "defer"
    assert speed_without_gpu("self-grade") == "not-applicable"
    assert speed_without_gpu("notebook") == "not-applicable"
    monkeypatch.setenv("AAG_SPEED_WITHOUT_GPU", "Full")
    assert speed_without_gpu("autograde", "zero") == "full"
    assert speed_without_gpu("self-grade") == "full"
    monkeypatch.setenv("AAG_SPEED_WITHOUT_GPU", "half")
    with pytest.raises(ValueError, match="AAG_SPEED_WITHOUT_GPU"):
        speed_without_gpu("autograde")


def test_only_the_rule_reads_the_speed_setting():
    """No module reads AAG_SPEED_WITHOUT_GPU itself (two readers once had two defaults)."""
    import re
    from pathlib import Path
    package = Path(ag.__file__).parent
    readers = [str(p.relative_to(package)) for p in package.rglob("*.py")
               if re.search(r"[\"']AAG_SPEED_WITHOUT_GPU[\"']", p.read_text())]
    assert readers == ["core/spec.py"], readers


def test_timing_refuses_while_the_notebook_is_graded(monkeypatch):
    """On a GPU, is timing refused while the grader runs the notebook (AAG_GRADING=judge), with a
    reason that says so, and allowed otherwise? In CPU mode the reason is the missing GPU."""
    from types import SimpleNamespace
    from autograder.machine import device
    monkeypatch.delenv("AAG_GRADING", raising=False)
    if not ag.backend.is_gpu:
        assert "needs a GPU" in timing.not_measured("Timing the scans")
        assert not timing.measuring()
        assert timing.not_measured("Timing the CPU loop", gpu=False) is None   # CPU code: timed
        monkeypatch.setenv("AAG_GRADING", "judge")
        assert "skipped while the notebook is graded" in timing.not_measured("Timing the CPU loop",
                                                                              gpu=False)
        monkeypatch.delenv("AAG_GRADING")
    gpu = SimpleNamespace(is_gpu=True, label="cuda", reason="faked")
    monkeypatch.setattr(device, "current", lambda: gpu)
    assert timing.not_measured("Timing the scans") is None and timing.measuring()
    timing.require_gpu()                          # no error on a GPU outside grading
    monkeypatch.setenv("AAG_GRADING", "judge")
    assert not timing.measuring()
    with pytest.raises(timing.NeedsGPU, match="Timing the scans is skipped while the notebook is graded"):
        timing.require_gpu("Timing the scans")
    with pytest.raises(timing.NeedsGPU, match="skipped while the notebook is graded"):
        timing.time_gpu("x", lambda i: None)


# Calls that time kernels in a chapter's cell (the course's timing helpers and chapter `measure`s).
TIMING_CALLS = re.compile(r"\b(time_gpu|copy_ceiling|copy_variants|copy_cost|measure|for_problem)\(")
# What lets such a cell skip its timing in CPU mode and while the notebook is graded.
ASKS_FIRST = re.compile(r"not_measured\(|except ag\.timing\.NeedsGPU|except timing\.NeedsGPU")


@pytest.mark.parametrize("chapter", h.real_chapters())
def test_every_measuring_cell_skips_its_timing_while_graded(chapter):
    """Does every cell of a chapter that times kernels ask first (``ag.timing.not_measured()`` or
    catch ``NeedsGPU``), so that the grader's run of a notebook times none of its experiments?
    (for_problem, the roofline, asks inside.) A cell that timed its kernels under the grader
    would cost the grader's GPU seconds to minutes per submission, for no points."""
    source = (h.chapter_source_dir(chapter) / f"{chapter}.py").read_text()
    for cell in re.split(r"\n(?=# %%)", source):
        if cell.startswith("# %% [markdown]"):
            continue
        calls = {m.group(1) for m in TIMING_CALLS.finditer(cell)} - {"for_problem"}
        if calls and not ASKS_FIRST.search(cell):
            first = next(line for line in cell.splitlines()[1:] if line.strip())
            pytest.fail(f"{chapter}: the cell starting {first!r} times kernels ({', '.join(sorted(calls))}) "
                        "without asking ag.timing.not_measured() or catching ag.timing.NeedsGPU")
