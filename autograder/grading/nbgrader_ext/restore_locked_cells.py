"""RestoreLockedCells: nbgrader's OverwriteCells, logging only what a learner really changed.

At autograde, OverwriteCells puts every locked cell back from the gradebook's copy of the source
and warns when the submitted cell differs from it. A test cell with hidden tests always differs:
the gradebook holds the source (hidden tests included), while the learner received the release
(hidden tests removed by ClearHiddenTests). So each untouched submission logged one "Attribute
'checksum' for cell ... has changed!" per such cell, and the one real edit in a class was buried
among hundreds of them.

This step compares a locked cell with what the release gave the learner (the source with its
hidden regions removed, by nbgrader's own ClearHiddenTests): the same, and it is restored without
a word; different, and the learner's changes go into one warning per submission, naming the
learner and each cell. What is restored, and the grades, are exactly OverwriteCells'.
"""

from __future__ import annotations

import logging
from typing import Any, Tuple

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode

from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


class _Without(logging.Filter):
    """Drops the log records whose message starts with ``prefix``."""

    def __init__(self, prefix: str):
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefix)


class RestoreLockedCells(OverwriteCells):
    """OverwriteCells, quiet about the hidden tests the release left out; one line per learner
    for real changes (an edited or retyped locked cell, changed points, a deleted grade cell)."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> Tuple[NotebookNode, ResourcesDict]:
        self._changes: list[str] = []
        self._submitted = ""
        nb, resources = super().preprocess(nb, resources)
        if self._changes:
            who = resources.get("nbgrader", {}).get("student", "?")
            self.log.warning("%s changed cells that are not theirs to change (restored from the "
                             "source before grading): %s", who, "; ".join(self._changes))
        return nb, resources

    def preprocess_cell(self, cell: NotebookNode, resources: ResourcesDict,
                        cell_index: int) -> Tuple[NotebookNode, ResourcesDict]:
        self._submitted = cell.source        # before OverwriteCells restores it
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name: str, attr: str, old: Any, new: Any) -> None:
        if attr == "checksum" and self._as_released(name) == self._submitted:
            return                            # untouched: it differs only by the hidden tests
        if attr == "cell_type":
            what = f"turned from {old} into {new}"
        elif attr == "points":                # OverwriteCells gives both as floats
            what = f"points changed from {old:g} to {new:g}"
        else:
            what = {"checksum": "edited", "locked": "unlocked"}.get(attr, attr + " changed")
        self._changes.append(f"{name} {what}")

    def add_missing_grade_cells(self, nb, resources):
        before = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
        quiet = _Without("Missing grade cell")     # said in the learner's one line instead
        self.log.addFilter(quiet)
        try:
            nb, resources = super().add_missing_grade_cells(nb, resources)
        finally:
            self.log.removeFilter(quiet)
        added = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
                 if c.metadata.get("nbgrader", {}).get("grade_id") not in before]
        self._changes += [f"{name} deleted (put back)" for name in added]
        return nb, resources

    def _as_released(self, grade_id: str) -> str | None:
        """The source of a cell as the release gave it: the gradebook's, hidden regions removed."""
        source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
        cell = NotebookNode({"cell_type": source.cell_type, "source": source.source,
                             "metadata": {"nbgrader": {"grade": True, "grade_id": grade_id}}})
        released, _ = ClearHiddenTests(parent=self).preprocess_cell(cell, {}, 0)
        return released.source
