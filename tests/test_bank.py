"""The bank of submissions through a real ``nbgrader autograde``, judge and sandbox included.

For each chapter-1/2 exercise a small one-exercise assignment is made from the chapter's own cells
(the setup, the exercise cell with the reference solution, the real test cell with its hidden
tests, and the speed cell if it has one), released with nbgrader, and every bank entry for that
exercise is submitted as one student and autograded in one run, as an instructor would.

* ``ok_*`` entries must get every correctness point (no false alarms);
* ``wrong_*`` and ``exploit_*`` entries must get none (all caught); tests/test_bank_naive.py shows
  that each exploit does score under a naive in-process check, so none is a strawman.

Entries marked ``gpu-only`` (timing cheats) matter only where speed is measured: they are graded
on the GPU machine (scripts/gpu-judge), not here. The catch and false-alarm rates are printed at
the end of the test run (see conftest.py).
"""

from __future__ import annotations

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


def _entries(exercise):
    return [e for e in bank.entries() if e.exercise == exercise and (ag.backend.is_gpu or not e.gpu_only)]


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


def _grade(directory: Path, exercise: str) -> dict:
    """Release, submit every entry, autograde once; return {entry: {cell: [score, max]}}."""
    root = h.make_course(directory, [])
    name = _assignment(root, exercise)
    h.nbgrader(root, "generate_assignment", name, "--force")
    release = h.read_nb(root / "course" / name / f"{name}.ipynb")
    solution_id = bank.EXERCISES[exercise]["solution_id"]
    entries = _entries(exercise)
    for entry in entries:
        nb = h.mutate(release, solution_id, "", "")           # a copy
        h.cell_by_id(nb, solution_id).source = entry.code
        h.submit(root, name, entry.name, nb)
    h.nbgrader(root, "autograde", name, "--force", f"--Execute.timeout={CELL_TIMEOUT}",
               f"--JudgeSubmission.exec_timeout={CELL_TIMEOUT}", timeout=3000,
               environ=h.env(AAG_CHECK_TIMEOUT=CHECK_LIMIT, AAG_SPEED_WITHOUT_GPU="zero"))
    results = {}
    for entry in entries:
        scores = h.grades(root, name, entry.name)
        report = root / "autograded" / entry.name / name / "judge.json"
        judged = json.loads(report.read_text()) if report.exists() else {}
        results[entry.name] = {"scores": {k: list(v) for k, v in scores.items()},
                               "errors": {k: v.get("error", "") for k, v in judged.items()}}
    return {"root": str(root), "results": results}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    cache = {}

    def get(exercise):
        if exercise not in cache:
            cache[exercise] = h.once(tmp_path_factory, f"bank-{exercise}",
                                     lambda d: _grade(d, exercise))
        return cache[exercise]
    return get


@pytest.mark.parametrize("exercise", sorted(bank.EXERCISES))
def test_every_bank_entry_gets_the_grade_it_deserves(graded, exercise, record_property):
    """ok entries get every correctness point; wrong and exploit entries get none."""
    entries = _entries(exercise)
    if not entries:
        pytest.skip(f"no bank entries for {exercise} on this backend")
    results = graded(exercise)["results"]
    test_id = bank.EXERCISES[exercise]["test_id"]
    speed_id = bank.EXERCISES[exercise]["speed_id"]
    problems = []
    for entry in entries:
        scores = results[entry.name]["scores"]
        if entry.kind == "ok":
            cells = [test_id] + ([speed_id] if speed_id and ag.backend.is_gpu else [])
            bad = [c for c in cells if scores[c][0] != scores[c][1]]
            caught = None
            if bad:
                problems.append(f"false alarm: {entry.id} lost {bad}: {results[entry.name]['errors']}")
        else:
            cells = [test_id] + ([speed_id] if speed_id and entry.gpu_only else [])
            earned = sum(scores[c][0] for c in cells)
            caught = earned == 0
            if not caught:
                problems.append(f"missed: {entry.id} scored {earned} on {cells} ({entry.note})")
        record_property("bank", json.dumps({"id": entry.id, "kind": entry.kind,
                                            "caught": caught, "ok": entry.kind != "ok" or not bad}))
    assert not problems, "\n".join(problems)
