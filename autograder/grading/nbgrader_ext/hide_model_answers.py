"""HideModelAnswers: the model answers AddModelAnswers put in for the grader stay out of the
learner's feedback page."""

from __future__ import annotations

from typing import Tuple

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.grading.nbgrader_ext.add_model_answers import is_model_answer


class HideModelAnswers(NbGraderPreprocessor):
    """Drop the model-answer cells from the notebook feedback is made from."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> Tuple[NotebookNode, ResourcesDict]:
        nb.cells = [cell for cell in nb.cells if not is_model_answer(cell)]
        return nb, resources
