"""The bank of submissions through a real ``nbgrader autograde``, judge and sandbox included.

For each exercise a small one-exercise assignment is made from its chapter's own cells (the setup,
the exercise cell with the reference solution, the real test cell with its hidden tests, and the
speed cell if it has one). A chapter's assignments share one course: one ``generate_assignment``
releases them all, every bank entry is submitted as one student, and one ``autograde`` grades every
submission of the chapter, as an instructor would grade a week's work.

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
from pathlib import Path

import nbformat
import pytest

import autograder as ag
import bank
import nbgrader_helpers as h

pytestmark = pytest.mark.slow

CHECK_LIMIT = 10       # seconds a single case may run (AAG_CHECK_TIMEOUT)
CELL_TIMEOUT = 60      # nbgrader's per-cell timeout, and the judge's for the cells before a test


@functools.cache
def _all_entries():
    return tuple(bank.entries())


def _entries(exercise):
    return [e for e in _all_entries() if e.exercise == exercise and (ag.backend.is_gpu or not e.gpu_only)]


def _assignment(root: Path, exercise: str) -> str:
    """Write source/bank_<exercise>/bank_<exercise>.ipynb from the chapter's cells."""
    spec = bank.EXERCISES[exercise]
    name = f"bank_{exercise}"

    def code(source, **meta):
        c = nbformat.v4.new_code_cell(source)
        if meta:
            c.metadata["nbgrader"] = {"schema_version": 3, "solution": False, "task": False,
                                      "locked": True, **meta}
        return c

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# Bank: {exercise}"),
                code(bank.SETUP, grade=False, grade_id="setup"),
                code(bank.cell(exercise, spec["solution_id"]), grade=False, solution=True,
                     locked=False, grade_id=spec["solution_id"]),
                code(bank.grading_cell(exercise), grade=True, grade_id=spec["test_id"], points=3)]
    if spec["speed_id"]:
        nb.cells.append(code(bank.speed_cell(exercise), grade=True, grade_id=spec["speed_id"], points=2))
    h.write_nb(nb, root / "source" / name / f"{name}.ipynb")
    return name


def _exercises(chapter: str) -> list[str]:
    return [e for e in sorted(bank.EXERCISES)
            if bank.EXERCISES[e]["chapter"] == chapter and _entries(e)]


def _grade(directory: Path, chapter: str) -> dict:
    """Release a chapter's bank assignments, submit every entry, autograde them all at once;
    return {exercise: {entry: {"scores": {cell: [score, max]}, "errors": {cell: text}}}}."""
    root = h.make_course(directory, [])
    names = {exercise: _assignment(root, exercise) for exercise in _exercises(chapter)}
    h.nbgrader(root, "generate_assignment", "bank_*", "--force")      # nbgrader globs the id
    for exercise, name in names.items():
        release = h.read_nb(root / "course" / name / f"{name}.ipynb")
        solution_id = bank.EXERCISES[exercise]["solution_id"]
        for entry in _entries(exercise):
            nb = h.mutate(release, solution_id, "", "")           # a copy
            h.cell_by_id(nb, solution_id).source = entry.code
            h.submit(root, name, entry.name, nb)
    h.nbgrader(root, "autograde", "bank_*", "--force", f"--Execute.timeout={CELL_TIMEOUT}",
               f"--JudgeSubmission.exec_timeout={CELL_TIMEOUT}", timeout=3000,
               environ=h.env(AAG_CHECK_TIMEOUT=CHECK_LIMIT, AAG_SPEED_WITHOUT_GPU="zero"))
    results = {}
    for exercise, name in names.items():
        results[exercise] = {}
        for entry in _entries(exercise):
            scores = h.grades(root, name, entry.name)
            report = root / "autograded" / entry.name / name / "judge.json"
            judged = json.loads(report.read_text()) if report.exists() else {}
            results[exercise][entry.name] = {
                "scores": {k: list(v) for k, v in scores.items()},
                "errors": {k: v.get("error", "") for k, v in judged.items()}}
    return {"root": str(root), "results": results}


# The chapters with the most entries first: each is one long test, and starting the longest
# first keeps both workers busy to the end.
CHAPTERS = sorted({spec["chapter"] for spec in bank.EXERCISES.values()},
                  key=lambda c: (-sum(len(_entries(e)) for e in _exercises(c)), c))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_bank_entry_gets_the_grade_it_deserves(tmp_path_factory, chapter, record_property):
    """ok entries get every correctness point; wrong and exploit entries get none."""
    if not _exercises(chapter):
        pytest.skip(f"no bank entries for {chapter} on this backend")
    results = h.once(tmp_path_factory, f"bank-{chapter}", lambda d: _grade(d, chapter))["results"]
    problems = []
    for exercise in _exercises(chapter):
        test_id = bank.EXERCISES[exercise]["test_id"]
        speed_id = bank.EXERCISES[exercise]["speed_id"]
        for entry in _entries(exercise):
            scores = results[exercise][entry.name]["scores"]
            errors = results[exercise][entry.name]["errors"]
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
