"""Does the timing harness refuse to time the simulator, and cache CPU baselines per machine?"""

import pytest

import autograder as ag
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
