"""PerExerciseCsvExportPlugin: ``nbgrader export`` with one column per graded cell.

nbgrader's own CSV has a row per learner and assignment with the total only. This plugin writes
the same columns, in the same order, then one column per graded cell of the exported assignments
(``vector_add_test``, ``grid_stride_speed``, a written answer's id...): that cell's score, empty
where the learner did not submit the assignment or the cell belongs to another assignment.
Grade cell ids are unique across the course (every exercise has its own name), so a column means
one exercise's test, speed test or written answer. Values are written by Python's ``csv`` module
(names with commas stay one field). Selected in ``nbgrader_config.py``
(``c.ExportApp.plugin_class``).
"""

from __future__ import annotations

import csv

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin

BASE = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
        "raw_score", "late_submission_penalty", "score", "max_score"]


class PerExerciseCsvExportPlugin(ExportPlugin):
    """nbgrader's CSV export plus a score column per graded cell."""

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades.csv"
        students = {str(s) for s in self.student}
        assignments = [a for a in gradebook.assignments
                       if not self.assignment or a.name in {str(x) for x in self.assignment}]
        cells = [cell.name for a in assignments for nb in a.notebooks for cell in nb.grade_cells]
        self.log.info("Exporting grades to %s (%d graded cells as columns)", dest, len(cells))
        with open(dest, "w", newline="") as fh:
            out = csv.writer(fh)
            out.writerow(BASE + cells)
            for assignment in assignments:
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    row = {"assignment": assignment.name, "duedate": assignment.duedate,
                           "student_id": student.id, "last_name": student.last_name,
                           "first_name": student.first_name, "email": student.email,
                           "max_score": assignment.max_score}
                    try:
                        submission = gradebook.find_submission(assignment.name, student.id)
                    except MissingEntry:
                        row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0,
                                   score=0.0)
                    else:
                        penalty = submission.late_submission_penalty
                        row.update(timestamp=submission.timestamp, raw_score=submission.score,
                                   late_submission_penalty=penalty,
                                   score=max(0.0, submission.score - penalty))
                        for notebook in submission.notebooks:
                            for grade in notebook.grades:
                                row[grade.name] = grade.score
                    out.writerow(["" if row.get(k) is None else row.get(k, "") for k in BASE + cells])
