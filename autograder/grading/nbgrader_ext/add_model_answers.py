"""AddModelAnswers: the chapter's model answer under each written answer, for whoever grades it.

A written answer ("predict, then measure", graded by hand in formgrader) is judged against the
model answer in the chapter's source notebook. Formgrader shows the learner's answer alone, so a
grader had to open ``solutions/`` side by side. At autograde this step puts, right after each
written-answer cell of the graded notebook, a quoted copy of the source's answer, marked as the
model answer for the grader; formgrader shows it under the learner's answer. It is no grade cell:
it changes no score. It never reaches the learner: the release is made from the source without it,
and the feedback page leaves it out (:class:`HideModelAnswers`).

The model answer is read from ``source/<assignment>/<notebook>.ipynb`` in the course folder (a
grading worker of ``aag grade-all`` has it in its copy of the course); nothing is added when it is
missing. Every cell that looks like a model answer is dropped first and the real ones put back,
so running the step twice (grade-all's replay) changes nothing, and a learner's own cell made to
look like one (to pass their answer off as the model) never reaches the grader.
"""

from __future__ import annotations

from typing import Tuple

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_markdown_cell

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.grading.judge import written_answer_id
from autograder.grading.nbgrader_ext.execute_guarded import source_notebook

# The first line of every model-answer cell: how HideModelAnswers and a second run find them.
MARKER = "<!-- aag: model answer for the grader -->"


def is_model_answer(cell) -> bool:
    return cell.cell_type == "markdown" and cell.source.startswith(MARKER)


def model_answer_cell(grade_id: str, answer: str) -> NotebookNode:
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in answer.splitlines())
    return new_markdown_cell(f"{MARKER}\n**Model answer for `{grade_id}`** (for the grader: the "
                             f"learner's feedback leaves it out)\n\n{quoted}")


class AddModelAnswers(NbGraderPreprocessor):
    """Insert the source's model answer after each written answer of the graded notebook."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> Tuple[NotebookNode, ResourcesDict]:
        import nbformat

        source = source_notebook(self.config, resources)
        if source is None:
            return nb, resources
        answers = {}
        for cell in nbformat.read(str(source), as_version=4).cells:
            grade_id = written_answer_id(cell)
            if grade_id:
                answers[grade_id] = cell.source
        cells = []
        for cell in nb.cells:
            if is_model_answer(cell):
                continue
            cells.append(cell)
            grade_id = written_answer_id(cell)
            if grade_id in answers:
                cells.append(model_answer_cell(grade_id, answers[grade_id]))
        nb.cells = cells
        return nb, resources
