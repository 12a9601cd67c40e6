"""ag.reveal: model answers for a learner studying alone, after a passing self-grade, never in a
class's release."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from autograder.grading.judge import written_answer_id
from autograder.learner import answers

REPO = Path(__file__).resolve().parents[1]


def _written_answers(tree: str):
    for path in sorted((REPO / tree).glob("ch*/ch*.ipynb")):
        for cell in nbformat.read(str(path), as_version=4).cells:
            if written_answer_id(cell):
                yield path, written_answer_id(cell), cell.source


def test_model_answers_are_never_in_the_class_release():
    """Every written answer's model answer is in solutions/, and no sentence of it is in course/
    (what learners of a class receive)."""
    found = list(_written_answers("solutions"))
    assert len(found) >= 8, [g for _, g, _ in found]

    def text_of(tree):
        return "\n".join(cell.source for path in sorted((REPO / tree).glob("ch*/ch*.ipynb"))
                         for cell in nbformat.read(str(path), as_version=4).cells)

    released, solved = text_of("course"), text_of("solutions")
    for _, grade_id, text in found:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 60]
        assert sentences and all(s in solved for s in sentences), grade_id   # the check sees them
        leaked = [s for s in sentences if s in released]
        assert not leaked, (grade_id, leaked[:1])


def test_reveal_waits_for_a_passing_self_grade(tmp_path, capsys):
    grade_id = "image_gap_answer"
    chapter, text = answers.model_answer(grade_id)
    assert chapter == "ch03_multidimensional" and "Model answer" in text
    assert answers.reveal(grade_id, folder=tmp_path) is None
    assert "Not yet" in capsys.readouterr().out
    answers.record_self_grade(tmp_path, chapter, {"rgb_to_gray_test": True, "blur_test": False})
    assert answers.reveal(grade_id, folder=tmp_path) is None
    assert "still failing: blur_test" in capsys.readouterr().out
    answers.record_self_grade(tmp_path, chapter, {"rgb_to_gray_test": True, "blur_test": True})
    shown = answers.reveal(grade_id, folder=tmp_path)
    assert shown is not None and shown.data == text
    assert answers.reveal("no_such_answer", folder=tmp_path) is None
    assert "No written answer is called" in capsys.readouterr().out


def test_a_class_installation_has_nothing_to_reveal(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(answers, "solutions_dir", lambda: tmp_path / "no-solutions")
    answers.record_self_grade(tmp_path, "ch03_multidimensional", {"rgb_to_gray_test": True})
    assert answers.reveal("image_gap_answer", folder=tmp_path) is None
    assert "not part of this installation" in capsys.readouterr().out


def test_aag_grade_records_what_passed_beside_the_learners_notebook(tmp_path):
    """`aag grade` on a learner's copy keeps what passed beside it (and never writes into the
    course's own release or solutions)."""
    chapter = "ch01_introduction"
    mine = tmp_path / chapter / f"{chapter}.ipynb"
    mine.parent.mkdir()
    shutil.copy2(REPO / "solutions" / chapter / f"{chapter}.ipynb", mine)
    p = subprocess.run([sys.executable, "-m", "autograder", "grade", str(mine), "--json"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    record = json.loads((mine.parent / answers.RECORD).read_text())
    assert record[chapter]["passed"] and all(record[chapter]["passed"].values()), record
    assert not (REPO / "solutions" / chapter / answers.RECORD).exists()
    assert not (REPO / "course" / chapter / answers.RECORD).exists()
