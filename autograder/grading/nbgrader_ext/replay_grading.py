"""ReplayGrading: put a notebook graded on another machine into this course's gradebook.

``aag grade-all`` grades submissions on Dask workers, each in a private copy of the course with a
private gradebook (sqlite has one writer). The worker sends back the autograded notebook, made by
``ExecuteGuarded`` and ``JudgeSubmission`` exactly as in a serial ``nbgrader autograde``, and the
one writer on the instructor's machine then runs nbgrader's own autograde for that submission with
this preprocessor in place of those two: the submission is sanitized as usual (``OverwriteCells``
and the rest), then this step copies the worker's outputs into the cells, and ``SaveAutoGrades``,
``AssignLatePenalties`` and the others write the gradebook as they always do. So the gradebook
holds what a serial autograde would have written, through nbgrader's own code.

The worker's notebook must be the same notebook cell for cell (type and source after sanitizing);
anything else stops this submission with an error instead of grading it. ``judge.json``, the
judge's report for the instructor, is copied beside the graded notebook.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Tuple

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from traitlets import Unicode

from nbgrader.preprocessors import NbGraderPreprocessor


class ReplayGrading(NbGraderPreprocessor):
    """Copy the outputs of a notebook graded elsewhere into the submission's cells."""

    results_dir = Unicode("", help="Folder of notebooks graded elsewhere, laid out as "
                          "<student>/<assignment>/<notebook>.ipynb (with judge.json beside "
                          "them)").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> Tuple[NotebookNode, ResourcesDict]:
        from autograder.grading import safe_files

        info = resources.get("nbgrader", {})
        student, assignment, notebook = info.get("student"), info.get("assignment"), info.get("notebook")
        if not (self.results_dir and student and assignment and notebook):
            raise ValueError("ReplayGrading needs results_dir and nbgrader's student, assignment "
                             "and notebook")
        staged = Path(self.results_dir) / student / assignment
        graded = nbformat.read(str(staged / f"{notebook}.ipynb"), as_version=4)
        if len(graded.cells) != len(nb.cells):
            raise ValueError(f"{student}/{assignment}/{notebook}: the notebook graded elsewhere has "
                             f"{len(graded.cells)} cells, this submission {len(nb.cells)}")
        for k, (mine, theirs) in enumerate(zip(nb.cells, graded.cells)):
            if (mine.cell_type, mine.source) != (theirs.cell_type, theirs.source):
                raise ValueError(f"{student}/{assignment}/{notebook}: cell {k} differs from the "
                                 "notebook graded elsewhere")
            if mine.cell_type == "code":
                mine.outputs = theirs.get("outputs", [])
                mine.execution_count = theirs.get("execution_count")
        report = staged / "judge.json"
        folder = resources.get("metadata", {}).get("path")
        if report.is_file() and folder and os.path.isdir(folder):
            safe_files.write_file(Path(folder), "judge.json", report.read_bytes())
        return nb, resources
