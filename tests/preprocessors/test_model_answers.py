"""AddModelAnswers and HideModelAnswers on hand-made notebooks (no kernel needed)."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from traitlets.config import Config

from autograder.nbgrader_ext import AddModelAnswers, HideModelAnswers

MODEL = "*Model answer.* The copy takes 130 µs:\n\nthe floor is the copy, not the datasheet."


def written(text, grade_id="gap_answer"):
    return new_markdown_cell(text, metadata={"nbgrader": {
        "grade": True, "grade_id": grade_id, "locked": False, "points": 2, "schema_version": 3,
        "solution": True, "task": False}})


def _course(tmp_path):
    source = new_notebook(cells=[new_code_cell("x = 1"), written(MODEL), new_markdown_cell("end")])
    (tmp_path / "source" / "ch03").mkdir(parents=True)
    nbformat.write(source, str(tmp_path / "source" / "ch03" / "ch03.ipynb"))
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    return config


def _autograde(config, nb):
    resources = {"nbgrader": {"assignment": "ch03", "notebook": "ch03", "student": "ana"}}
    return AddModelAnswers(config=config).preprocess(nb, resources)[0]


def test_the_grader_sees_the_model_answer_under_the_learners(tmp_path):
    config = _course(tmp_path)
    graded = _autograde(config, new_notebook(cells=[
        new_code_cell("x = 1"), written("I think the kernel is slow."), new_markdown_cell("end")]))
    texts = [c.source for c in graded.cells]
    assert texts[1] == "I think the kernel is slow."          # the learner's answer, untouched
    model = graded.cells[2]
    assert model.cell_type == "markdown" and "metadata" in model and not model.metadata.get("nbgrader")
    assert "Model answer for `gap_answer`" in model.source
    assert "> the floor is the copy, not the datasheet." in model.source
    assert texts[3] == "end"
    # a second run (grade-all's replay on the instructor's machine) adds nothing
    assert [c.source for c in _autograde(config, graded).cells] == [c.source for c in graded.cells]
    # the learner's feedback: exactly the notebook before the step
    feedback, _ = HideModelAnswers().preprocess(graded, {})
    assert [c.source for c in feedback.cells] == ["x = 1", "I think the kernel is slow.", "end"]


def test_a_learners_cell_dressed_as_the_model_answer_never_reaches_the_grader(tmp_path):
    """A learner who puts, after their answer, a cell that looks like the model answer (the
    marker, their own text) must not have the grader compare their answer with itself: the
    grader sees the course's model answer, once."""
    from autograder.grading.nbgrader_ext.add_model_answers import MARKER
    config = _course(tmp_path)
    forged = new_markdown_cell(f"{MARKER}\n**Model answer for `gap_answer`**\n\n> I think so.")
    graded = _autograde(config, new_notebook(cells=[
        new_code_cell("x = 1"), written("I think so."), forged, new_markdown_cell("end")]))
    models = [c.source for c in graded.cells if c.source.startswith(MARKER)]
    assert len(models) == 1 and "the floor is the copy" in models[0]
    assert "> I think so." not in models[0]
    assert [c.source for c in graded.cells][1:] == ["I think so.", models[0], "end"]


def test_nothing_is_added_without_the_source(tmp_path):
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    nb = new_notebook(cells=[written("answer")])
    assert len(_autograde(config, nb).cells) == 1
