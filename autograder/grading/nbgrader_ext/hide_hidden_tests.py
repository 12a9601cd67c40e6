"""HideHiddenTests: keep hidden test code out of feedback.

Autograding restores every test cell from the source notebook, hidden regions included, and
``nbgrader generate_feedback`` renders the autograded notebook as it is: without this step the
learner's feedback HTML shows the hidden tests. The region's code is replaced by one comment, and
the traceback frames that quote the cell's own code are dropped from its error output (IPython
prints the lines around the failing one, which would otherwise show the hidden call); the frames
from other code and the final ``Error: message`` line stay, so the learner still sees why.
"""

from __future__ import annotations

import re
from typing import Tuple

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from traitlets import Unicode

from nbgrader.preprocessors import NbGraderPreprocessor

# Strips ANSI colour codes so a frame's header can be recognised whatever IPython coloured it.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class HideHiddenTests(NbGraderPreprocessor):
    """Replace hidden test regions in feedback by a one-line note."""

    # The delimiters carry nbgrader's spelling ("delimeter") so they read like ClearHiddenTests'.
    begin_test_delimeter = Unicode(
        "BEGIN HIDDEN TESTS",
        help="The delimiter marking the beginning of hidden tests cases (as in ClearHiddenTests)",
    ).tag(config=True)

    end_test_delimeter = Unicode(
        "END HIDDEN TESTS",
        help="The delimiter marking the end of hidden tests cases (as in ClearHiddenTests)",
    ).tag(config=True)

    placeholder = Unicode(
        "# (hidden tests ran here; their code is not shown)",
        help="The line shown in feedback where a hidden test region was",
    ).tag(config=True)

    def _hide_region(self, source: str) -> Tuple[str, bool]:
        """Return ``source`` with each hidden region replaced by the placeholder, and whether one was.

        An unterminated region hides everything to the end of the cell: feedback must not crash,
        and it must fail closed rather than leak.
        """
        new_lines = []
        in_region = False
        hid = False
        for line in source.split("\n"):
            if not in_region and self.begin_test_delimeter in line:
                indent = line[: len(line) - len(line.lstrip())]
                new_lines.append(indent + self.placeholder)
                in_region = hid = True
            elif in_region:
                if self.end_test_delimeter in line:
                    in_region = False
            else:
                new_lines.append(line)
        return "\n".join(new_lines), hid

    @staticmethod
    def _quotes_this_cell(frame: str, execution_count) -> bool:
        """Whether a traceback entry is the frame of the cell itself (IPython >= 8 and older)."""
        header = _ANSI.sub("", frame).lstrip().split("\n", 1)[0]
        if execution_count is None:
            return header.startswith(("Cell In[", "Input In [", "<ipython-input-"))
        n = execution_count
        return header.startswith((f"Cell In[{n}]", f"Input In [{n}]", f"<ipython-input-{n}-"))

    def _scrub_outputs(self, cell: NotebookNode) -> None:
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            count = cell.get("execution_count")
            kept = [f for f in output.get("traceback", []) if not self._quotes_this_cell(f, count)]
            if len(kept) != len(output.get("traceback", [])):
                kept.insert(0, "(the code around the error is not shown: this cell holds hidden tests)")
            output.traceback = kept

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, cell_index: int
    ) -> Tuple[NotebookNode, ResourcesDict]:
        if cell.cell_type != "code":
            return cell, resources
        cell.source, hid = self._hide_region(cell.source)
        # Only cells that held hidden tests lose frames: elsewhere the quoted code is visible to
        # the learner anyway, and the most useful part of the message.
        if hid:
            self._scrub_outputs(cell)
        return cell, resources
