"""Shared pytest setup: backend markers, so GPU tests skip with a reason on CPU-only machines."""

import os

import pytest

# On a machine with several GPUs, AAG_GPUS_PER_WORKER=1 gives each pytest-xdist worker its own
# GPU (set before anything initialises CUDA), so timed runs of different workers never share one.
if os.environ.get("AAG_GPUS_PER_WORKER") and os.environ.get("PYTEST_XDIST_WORKER"):
    _count = int(os.environ.get("AAG_GPU_COUNT", "1"))
    os.environ["CUDA_VISIBLE_DEVICES"] = str(int(os.environ["PYTEST_XDIST_WORKER"][2:]) % _count)

import autograder as ag  # noqa: E402  (after the GPU is chosen)


def pytest_collection_modifyitems(config, items):
    if ag.backend.name == "cuda":
        return
    reason = f"needs an NVIDIA GPU; this run uses {ag.backend.label} ({ag.backend.reason})"
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _chapter_of(nodeid: str) -> str:
    """The chapter a test belongs to (``chNN`` in its file name or parameters), else "course"."""
    import re
    found = re.search(r"ch(\d\d(?:[a-z](?![a-z]))?)", nodeid)
    if found:
        return f"ch{found.group(1)}"
    try:
        import bank   # bank entries are named by exercise: tests/bank knows their chapters
        for exercise, spec in bank.EXERCISES.items():
            if f"[{exercise}" in nodeid or f"{exercise}/" in nodeid:
                return spec["chapter"].split("_", 1)[0]
    except ImportError:
        pass
    return "course"


def _time_per_chapter(terminalreporter) -> None:
    """The suite's seconds per chapter (all phases of all its tests, on all workers together):
    where CI's time goes as chapters are added."""
    seconds: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            duration = getattr(report, "duration", None)
            if duration and getattr(report, "nodeid", ""):
                key = _chapter_of(report.nodeid)
                seconds[key] = seconds.get(key, 0.0) + duration
    if not seconds:
        return
    terminalreporter.write_sep("-", "test time per chapter (seconds, all workers together)")
    terminalreporter.write_line("  ".join(f"{k} {v:.0f}" for k, v in sorted(seconds.items()))
                                + f"  | total {sum(seconds.values()):.0f}")


def pytest_terminal_summary(terminalreporter):
    """Print the time per chapter, and the bank's catch rate and false-alarm rate
    (tests/test_bank.py records each entry)."""
    import json
    _time_per_chapter(terminalreporter)
    rows = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "bank" and getattr(report, "when", "call") == "call":
                    rows.append(json.loads(value))
    if not rows:
        return
    bad = [r for r in rows if r["kind"] != "ok"]
    good = [r for r in rows if r["kind"] == "ok"]
    caught = sum(bool(r["caught"]) for r in bad)
    alarms = sum(not r["ok"] for r in good)
    terminalreporter.write_sep("-", "submission bank (graded by the judge, as nbgrader autograde grades)")
    terminalreporter.write_line(
        f"bank: caught {caught}/{len(bad)} wrong or cheating submissions "
        f"({100 * caught / max(len(bad), 1):.0f}%), false alarms {alarms}/{len(good)} correct "
        f"submissions ({100 * alarms / max(len(good), 1):.0f}%)")
