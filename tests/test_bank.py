"""The bank of submissions, graded as ``nbgrader autograde`` grades them: judge and sandbox included.

Each entry is put into a one-exercise notebook made from its chapter's own cells
(:func:`bank.notebook`: the setup, the entry as the solution cell, the real test cell with its
hidden tests, the speed cell if there is one) and judged through the judge's own entry point,
:func:`autograder.judge.judge_notebook`: the call ``JudgeSubmission`` makes inside ``nbgrader
autograde``, with the same settings (sandbox required, a secret seed, the course folder protected,
the submission's folder copied for the student process). A chapter's entries are one test.

nbgrader's own part (its sandboxed kernel, the cleaning of the autograded folder, the scores in the
gradebook) is proven once per chapter by tests/test_nbgrader_roundtrip.py, and here for the entries
marked ``# autograde: nbgrader`` (what they do happens in the folder nbgrader's kernel runs in):
those go through a real ``nbgrader autograde``, one course for all of them.

* ``ok_*`` entries must get every correctness point (no false alarms);
* ``wrong_*`` and ``exploit_*`` entries must get none (all caught); tests/test_bank_naive.py shows
  that each exploit does score under a naive in-process check, so none is a strawman.

Entries marked ``gpu-only`` (timing cheats) matter only where speed is measured: they are graded
on the GPU machine (scripts/gpu-judge), not here. The catch and false-alarm rates are printed at
the end of the test run (see conftest.py).
"""

from __future__ import annotations

import functools
import json
import secrets
from pathlib import Path

import pytest

import autograder as ag
import bank
import nbgrader_helpers as h
from autograder import judge

pytestmark = pytest.mark.slow

CELL_TIMEOUT = 60      # nbgrader's per-cell timeout, and the judge's for the cells before a test
POINTS = {"test_id": 3, "speed_id": 2}


@functools.cache
def _all_entries():
    return tuple(bank.entries())


def _entries(exercise, nbgrader=None):
    return [e for e in _all_entries() if e.exercise == exercise and (ag.backend.is_gpu or not e.gpu_only)
            and (nbgrader is None or e.nbgrader == nbgrader)]


def _assignment(root: Path, exercise: str) -> str:
    """Write source/bank_<exercise>/bank_<exercise>.ipynb from the chapter's cells."""
    name = f"bank_{exercise}"
    h.write_nb(bank.notebook(exercise, bank.cell(exercise, bank.EXERCISES[exercise]["solution_id"])),
               root / "source" / name / f"{name}.ipynb")
    return name


def _exercises(chapter: str) -> list[str]:
    return [e for e in sorted(bank.EXERCISES)
            if bank.EXERCISES[e]["chapter"] == chapter and _entries(e)]


def _judge(directory: Path, chapter: str, monkeypatch) -> dict:
    """Judge every entry of a chapter (but those for nbgrader) as JudgeSubmission would; return
    {exercise: {entry: {"scores": {cell: [score, max]}, "errors": {cell: text}}}}."""
    course = directory / "course"                    # what the sandbox must never show
    (course / ".aag").mkdir(parents=True)
    (course / ".aag" / "secret").write_text(secrets.token_hex(16))
    # Each case gets the course's own processor-time limit (Problem.time_limit), as a learner's
    # does: the simulator's cost per thread grows when several run on a busy machine (a 4,096-
    # thread case of chapter 7 took 3.3 s alone and over 10 s in CI), so a tighter limit here
    # would fail correct kernels that the course passes.
    monkeypatch.delenv("AAG_CHECK_TIMEOUT", raising=False)
    settings = judge.Settings(secret=(course / ".aag" / "secret").read_text(), sandbox="require",
                              protected=(course.resolve(),), exec_timeout=CELL_TIMEOUT,
                              speed_without_gpu="zero")
    results = {}
    for exercise in _exercises(chapter):
        spec = bank.EXERCISES[exercise]
        results[exercise] = {}
        for entry in _entries(exercise, nbgrader=False):
            folder = course / "autograded" / entry.name / f"bank_{exercise}"
            folder.mkdir(parents=True)
            judged = judge.judge_notebook(bank.notebook(exercise, entry.code), settings,
                                          files_from=folder)
            results[exercise][entry.name] = {
                "scores": {spec[k]: [POINTS[k] * r.passed, POINTS[k]]
                           for k in POINTS if spec[k] for r in [judged[spec[k]]]},
                "errors": {cell: r.error for cell, r in judged.items()}}
    return results


def _autograde(directory: Path, exercises: list[str]) -> dict:
    """Release the exercises' bank assignments, submit their ``autograde: nbgrader`` entries,
    autograde them all at once; return results as :func:`_judge` does."""
    root = h.make_course(directory, [])
    names = {exercise: _assignment(root, exercise) for exercise in exercises}
    h.nbgrader(root, "generate_assignment", "bank_*", "--force")      # nbgrader globs the id
    for exercise, name in names.items():
        release = h.read_nb(root / "course" / name / f"{name}.ipynb")
        solution_id = bank.EXERCISES[exercise]["solution_id"]
        for entry in _entries(exercise, nbgrader=True):
            nb = h.mutate(release, solution_id, "", "")           # a copy
            h.cell_by_id(nb, solution_id).source = entry.code
            h.submit(root, name, entry.name, nb)
    h.nbgrader(root, "autograde", "bank_*", "--force", f"--Execute.timeout={CELL_TIMEOUT}",
               f"--JudgeSubmission.exec_timeout={CELL_TIMEOUT}", timeout=3000,
               environ=h.env(AAG_SPEED_WITHOUT_GPU="zero"))
    results = {}
    for exercise, name in names.items():
        results[exercise] = {}
        for entry in _entries(exercise, nbgrader=True):
            scores = h.grades(root, name, entry.name)
            report = root / "autograded" / entry.name / name / "judge.json"
            judged = json.loads(report.read_text()) if report.exists() else {}
            results[exercise][entry.name] = {
                "scores": {k: list(v) for k, v in scores.items()},
                "errors": {k: v.get("error", "") for k, v in judged.items()}}
    return results


def _assert_grades(results: dict, record_property) -> None:
    """ok entries got every correctness point; wrong and exploit entries got none."""
    problems = []
    for exercise, graded in results.items():
        test_id = bank.EXERCISES[exercise]["test_id"]
        speed_id = bank.EXERCISES[exercise]["speed_id"]
        for entry in _entries(exercise):
            if entry.name not in graded:
                continue
            scores, errors = graded[entry.name]["scores"], graded[entry.name]["errors"]
            bad = []
            if entry.kind == "ok":
                cells = [test_id] + ([speed_id] if speed_id and ag.backend.is_gpu else [])
                bad = [c for c in cells if scores[c][0] != scores[c][1]]
                caught = None
                if bad:
                    problems.append(f"false alarm: {entry.id} lost {bad}: {errors}")
            else:
                cells = [test_id] + ([speed_id] if speed_id and entry.gpu_only else [])
                earned = sum(scores[c][0] for c in cells)
                caught = earned == 0
                if not caught:
                    problems.append(f"missed: {entry.id} scored {earned} on {cells} ({entry.note})")
            record_property("bank", json.dumps({"id": entry.id, "kind": entry.kind,
                                                "caught": caught, "ok": not bad}))
    assert not problems, "\n".join(problems)


# The chapters with the most entries first: each is one long test, and starting the longest
# first keeps both workers busy to the end.
CHAPTERS = sorted({spec["chapter"] for spec in bank.EXERCISES.values()},
                  key=lambda c: (-sum(len(_entries(e)) for e in _exercises(c)), c))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_bank_entry_gets_the_grade_it_deserves(tmp_path, monkeypatch, chapter, record_property):
    """ok entries get every correctness point; wrong and exploit entries get none."""
    if not _exercises(chapter):
        pytest.skip(f"no bank entries for {chapter} on this backend")
    _assert_grades(_judge(tmp_path, chapter, monkeypatch), record_property)


def test_entries_that_act_in_nbgraders_folder_get_the_grade_they_deserve(tmp_path, record_property):
    """The entries marked ``autograde: nbgrader``, through a real ``nbgrader autograde``."""
    exercises = sorted({e.exercise for e in _all_entries() if e.nbgrader})
    if not exercises:
        pytest.skip("no bank entry needs nbgrader's own folder")
    _assert_grades(_autograde(tmp_path, exercises), record_property)
