"""ScrubGraderPaths: the grading machine's folders out of the learner's feedback.

A traceback in the autograded notebook names the files of every frame: the grader's Python
installation and virtual environment (``/home/teacher/.pyenv/versions/3.11.7/...``), the course
folder (``/home/teacher/course/autograded/ana/...``), the instructor's home. Feedback goes to the
learner; these say nothing about their code and something about the instructor's machine. Each is
replaced by a short name (``<python>``, ``<environment>``, ``<course>``, ``~``) in the outputs of
every code cell (text streams, errors and their tracebacks, plain-text results); the rest of each
line, the library file's own path inside the installation included, stays as it was.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Tuple

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from traitlets import Unicode

from nbgrader.preprocessors import NbGraderPreprocessor


def grader_paths(course_root: str | None = None) -> list[tuple[str, str]]:
    """(folder, its short name), longest folder first, as written and as resolved."""
    names = [(sys.prefix, "<environment>"), (sys.exec_prefix, "<environment>"),
             (sys.base_prefix, "<python>"), (sys.base_exec_prefix, "<python>"),
             (course_root or os.getcwd(), "<course>"), (os.path.expanduser("~"), "~")]
    pairs = {}
    for folder, name in names:
        for form in {folder, str(Path(folder).resolve())}:
            if len(form) > 1:                 # never "/"
                pairs.setdefault(form.rstrip("/"), name)
    return sorted(pairs.items(), key=lambda p: -len(p[0]))


def scrub(text: str, pairs: list[tuple[str, str]]) -> str:
    for folder, name in pairs:
        if folder in text:
            text = text.replace(folder, name)
    return text


class ScrubGraderPaths(NbGraderPreprocessor):
    """Replace the grading machine's folders in code cells' outputs by short names."""

    course_root = Unicode("", help="The course folder (default: the folder nbgrader runs "
                          "in)").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> Tuple[NotebookNode, ResourcesDict]:
        self._pairs = grader_paths(self.course_root or None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: ResourcesDict,
                        cell_index: int) -> Tuple[NotebookNode, ResourcesDict]:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if "text" in output:
                output.text = scrub(output.text, self._pairs)
            if "evalue" in output:
                output.evalue = scrub(output.evalue, self._pairs)
            if "traceback" in output:
                output.traceback = [scrub(line, self._pairs) for line in output.traceback]
            data = output.get("data", {})
            if "text/plain" in data:
                data["text/plain"] = scrub(data["text/plain"], self._pairs)
        return cell, resources
