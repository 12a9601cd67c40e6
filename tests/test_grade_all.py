"""``aag grade-all``: a class graded at once on a Dask ``LocalCluster``, into nbgrader's gradebook.

The course is the pure-Python fixture chapter (fast: what is under test is the fan-out, the one
writer and the faults, not the chapters). Ten learners submit: the solution, the blank release,
two kinds of broken solution, the solution with its test cells tampered with (one weakened, one
deleted: both restored before grading, and named in one line of the log), and one notebook that
is not a notebook at all. Grading runs on two
worker processes; one of them is killed while it grades. The gradebook must end complete and equal
to what a serial ``nbgrader autograde`` writes for the same submissions, the broken file must be
reported "not graded", and a second run must grade only what is missing. Then ``nbgrader export``
(a column per graded cell) and ``aag class-report`` (pass rates, reasons) are read back.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

import nbgrader_helpers as h

pytestmark = pytest.mark.slow
pytest.importorskip("distributed", reason="aag grade-all needs dask and distributed")

CHAPTER = h.FIXTURE_CHAPTER
LEARNERS = 10


def _tampered(solution):
    nb = h.mutate(solution, "add_test", "assert add(1, 2) == 3", "assert True")
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "scale_test"]
    return nb


def _submissions(root: Path) -> dict[str, str]:
    """Ten learners' submissions; learner -> what was submitted."""
    solution = h.read_nb(root / "solutions" / CHAPTER / f"{CHAPTER}.ipynb")
    release = h.read_nb(root / "course" / CHAPTER / f"{CHAPTER}.ipynb")
    kinds = {
        "solution": solution,
        "blank": release,
        "add_wrong": h.mutate(solution, "add", "return a + b + OFFSET", "return a - b"),
        "scale_raises": h.mutate(solution, "scale", "return [x * k for x in xs]",
                                 "raise RuntimeError('scale is broken')"),
        # Right answers, a test cell weakened and another deleted: both restored before grading.
        "tampered": _tampered(solution),
    }
    made = {}
    for k in range(LEARNERS - 1):
        kind = list(kinds)[k % len(kinds)]
        h.submit(root, CHAPTER, f"learner{k:02d}", kinds[kind])
        made[f"learner{k:02d}"] = kind
    # Not a notebook: nbgrader cannot read it, so it cannot be graded (and says so).
    broken = root / "submitted" / "learner99" / CHAPTER
    broken.mkdir(parents=True)
    (broken / f"{CHAPTER}.ipynb").write_text("{ this is not json")
    (broken / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    made["learner99"] = "not a notebook"
    return made


def _all_grades(root: Path, learners) -> dict:
    from nbgrader.api import Gradebook, MissingEntry

    h.aag_build.ensure_tools_on_path()
    out = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for learner in learners:
            try:
                nb = gb.find_submission_notebook(CHAPTER, CHAPTER, learner)
            except MissingEntry:
                continue
            out[learner] = {g.name: (g.auto_score, g.max_score, g.needs_manual_grade)
                            for g in nb.grades}
    return out


def _grade_all(root: Path, *args, on_line=None) -> tuple[int, list[str]]:
    cmd = [sys.executable, "-m", "autograder.tools.grade_all", CHAPTER, "--workers", "2",
           "--dashboard", ":0", *args]
    proc = subprocess.Popen(cmd, cwd=root, env=h.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line.rstrip())
        if on_line:
            on_line(proc, line)
    return proc.wait(timeout=600), lines


def _kill_a_grading_worker(parent: psutil.Process) -> int:
    """SIGKILL one of the cluster's worker processes while it runs a grading; return its pid."""
    for _ in range(200):
        for child in parent.children():
            try:
                if any("nbgrader" in " ".join(p.cmdline()) for p in child.children(recursive=True)):
                    child.send_signal(signal.SIGKILL)
                    return child.pid
            except psutil.Error:
                continue
        time.sleep(0.1)
    raise AssertionError("no worker process was grading")


@pytest.fixture
def course(tmp_path, tmp_path_factory):
    """The fixture chapter released (once per test run), copied for one test."""
    def make(directory):
        h.make_course(directory, [CHAPTER])
        h.prepare(directory, CHAPTER)
        return str(directory)

    root = tmp_path / "course"
    shutil.copytree(h.once(tmp_path_factory, "grade-all-course", make), root)
    return root


def test_grade_all_survives_a_killed_worker_and_matches_a_serial_autograde(tmp_path, course):
    """A class graded on two workers, one killed mid-run: complete, equal to serial, idempotent."""
    root = course
    made = _submissions(root)
    serial = tmp_path / "serial"
    shutil.copytree(root, serial)

    killed = []

    def kill_once(proc, line):
        if not killed and line.startswith("[3/"):
            killed.append(_kill_a_grading_worker(psutil.Process(proc.pid)))

    rc, lines = _grade_all(root, on_line=kill_once)
    out = "\n".join(lines)
    assert killed, out
    assert rc == 1, out                         # one submission could not be graded
    assert "learner99: not graded" in out, out
    assert f"{LEARNERS - 1} graded, 1 not graded" in out, out
    progress = [line for line in lines if line.startswith("[")]
    assert len(progress) == LEARNERS, out

    # What a serial nbgrader autograde writes for the same submissions: one learner of each kind
    # (learner00 to learner04; the others submitted copies of the same notebooks).
    first = {f"learner{k:02d}" for k in range(len(set(made.values())) - 1)}
    assert {made[k] for k in first} == set(made.values()) - {"not a notebook"}
    log = h.nbgrader(serial, "autograde", CHAPTER, "--student=learner0[0-4]")
    _assert_the_log_names_only_the_tampering(log.stdout + log.stderr,
                                             {k: made[k] for k in first})
    graded = _all_grades(root, made)
    expected = _all_grades(serial, made)
    assert set(graded) == set(made) - {"learner99"}, sorted(graded)
    assert set(expected) == first, sorted(expected)
    assert {k: graded[k] for k in first} == expected
    for learner, kind in made.items():      # every copy graded as its kind's first learner
        twin = next((k for k in sorted(first) if made[k] == kind), None)
        if twin and learner in graded:
            assert graded[learner] == expected[twin], (learner, twin)
    scores = {k: sum(s for s, _, _ in v.values()) for k, v in graded.items()}
    assert {scores[k] for k, kind in made.items() if kind == "solution"} == {5}
    assert {scores[k] for k, kind in made.items() if kind == "blank"} == {0}
    assert {scores[k] for k, kind in made.items() if kind == "add_wrong"} == {3}
    assert {scores[k] for k, kind in made.items() if kind == "scale_raises"} == {2}
    assert {scores[k] for k, kind in made.items() if kind == "tampered"} == {5}
    for learner in graded:   # the autograded notebook and the judge's folder, as nbgrader leaves them
        assert (root / "autograded" / learner / CHAPTER / f"{CHAPTER}.ipynb").is_file()
    report = json.loads((root / ".aag" / "grade-all" / f"{CHAPTER}.json").read_text())
    assert report["learner99"]["graded"] is False and report["learner00"]["graded"] is True
    assert not (root / ".aag" / "grade-all" / f"staging-{CHAPTER}").exists()

    # Again: only what is missing (the broken notebook) is tried.
    rc, lines = _grade_all(root)
    out = "\n".join(lines)
    assert rc == 1 and f"1 to grade, {LEARNERS - 1} graded already" in out, out
    assert _all_grades(root, made) == graded
    assert os.path.exists(root / "gradebook.db")

    _assert_export_and_class_report(root, made, graded)


def _assert_the_log_names_only_the_tampering(log: str, made: dict) -> None:
    """An untouched test cell (hidden tests and all) logs nothing, nor does the kernel's banner
    or the gradebook's SQLAlchemy noise; a tampered notebook logs one line naming its cells
    (RestoreLockedCells)."""
    assert "checksum" not in log and "SAWarning" not in log and "NOTE: When using" not in log, log
    warned = [line for line in log.splitlines() if "WARNING" in line and "learner99" not in line]
    tampered = sorted(k for k, kind in made.items() if kind == "tampered")
    assert len(warned) == len(tampered), "\n".join(warned)
    for learner, line in zip(tampered, sorted(warned)):
        assert f"{learner} changed cells" in line, line
        assert "add_test edited" in line and "scale_test deleted" in line, line


def _assert_export_and_class_report(root: Path, made: dict, graded: dict) -> None:
    """``nbgrader export`` has a column per graded cell; ``aag class-report`` counts the class."""
    h.nbgrader(root, "export", "--to", "grades.csv")
    with open(root / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    for learner, cells in graded.items():
        for cell, (score, _, _) in cells.items():
            assert float(rows[learner][cell]) == score, (learner, cell)
    assert "learner99" not in rows                           # never graded: not in the gradebook

    from autograder.tools import class_report
    report = class_report.collect(root, CHAPTER)
    kinds = Counter(kind for learner, kind in made.items() if learner in graded)
    add, scale = report.cells["add_test"], report.cells["scale_test"]
    assert report.learners == len(graded) and add.graded == scale.graded == len(graded)
    assert add.full == kinds["solution"] + kinds["scale_raises"] + kinds["tampered"]
    assert scale.full == kinds["solution"] + kinds["add_wrong"] + kinds["tampered"]
    assert add.reasons["NotImplementedError"] == kinds["blank"], add.reasons
    assert add.reasons["AssertionError"] == kinds["add_wrong"], add.reasons
    assert scale.reasons["RuntimeError: scale is broken"] == kinds["scale_raises"], scale.reasons
    assert set(report.not_graded) == {"learner99"}
    text = class_report.table(report)
    assert "add_test" in text and "learner99" in text
    assert class_report.plot(report).axes[0].get_title().startswith(CHAPTER)


def test_a_grading_run_past_its_limit_is_stopped_whole(course, tmp_path):
    """A submission that never finishes costs its task the limit, and nothing of it is left
    running (the grading run's whole session is killed): what Dask then retries once."""
    from autograder.grading import batch
    from autograder.tools import grade_all

    solution = h.read_nb(course / "solutions" / CHAPTER / f"{CHAPTER}.ipynb")
    h.submit(course, CHAPTER, "spinner", h.mutate(solution, "add", "return a + b + OFFSET",
                                                 "while True:\n        pass"))
    kit, speed = grade_all.make_kit(course, CHAPTER, grade_all._load_config(course), tmp_path,
                                    nbgrader_args=("--Execute.timeout=600",), timeout=8)
    assert not speed and kit.notebooks == (CHAPTER,)
    files = batch.read_submission(course / "submitted" / "spinner" / CHAPTER)
    start = time.monotonic()
    with pytest.raises(batch.NotGraded, match="ran past 8 s"):
        batch.grade_submission(kit, "spinner", files)
    assert time.monotonic() - start < 40
    time.sleep(1)   # the sandboxed kernel goes with its parent (bubblewrap's --die-with-parent)
    left = []
    for p in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(p.info["cmdline"] or [])
        if "--student=spinner" in cmdline:
            left.append(cmdline)
    assert not left, left


def test_speed_only_needs_a_gpu(tmp_path, capsys):
    """grade-all --speed-only on a machine without a GPU (and no scheduler) refuses, saying why,
    before it starts anything."""
    from autograder.tools import grade_all
    from autograder.tools.course import open_gradebook
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    with open_gradebook(tmp_path) as gb:
        gb.add_assignment("ch02_data_parallel")
    rc = grade_all.main(["ch02_data_parallel", "--course", str(tmp_path), "--speed-only",
                         "--gpus", "none"])
    assert rc == 2
    assert "no GPU to time the speed cells on" in capsys.readouterr().err
