"""LatePenalty: the course's default rule for late work, as an nbgrader late-submission plugin.

A notebook submitted after the assignment's due date (``aag release ASSIGNMENT --due ...``, or
nbgrader's own ``db assignment add --duedate``) loses ``percent_per_day`` of its points for every
day or part of a day it is late, after ``grace_minutes``: one minute late and 23 hours late cost
the same. The penalty is a share of the notebook's maximum score, so it does not depend on whether
the written answers are graded yet; nbgrader never takes away more than the notebook scored when
autograde ran. A learner's extension (nbgrader's ``extension`` on the submission) moves their due
date before any of this is counted.

nbgrader's AssignLatePenalties step calls it during ``autograde``; the penalty goes into the
gradebook, the exported grades (the ``penalty`` column) and the learner's feedback page ("Late
submission penalty"). Set in nbgrader_config.py::

    c.AssignLatePenalties.plugin_class = LatePenalty
    c.LatePenalty.percent_per_day = 10      # 100: late work scores zero
    c.LatePenalty.grace_minutes = 0
"""

from __future__ import annotations

import math

from traitlets import Float

from nbgrader.plugins import LateSubmissionPlugin

DAY = 24 * 3600


def days_late(seconds_late: float, grace_minutes: float = 0.0) -> int:
    """Days or parts of a day past the due date, once the grace period is over (0: on time)."""
    over = seconds_late - 60.0 * grace_minutes
    return math.ceil(over / DAY) if over > 0 else 0


class LatePenalty(LateSubmissionPlugin):
    """A share of the notebook's points per day (or part of a day) late."""

    percent_per_day = Float(10.0, help="Percent of a notebook's maximum score lost per day or "
                            "part of a day late (100: late work scores zero)").tag(config=True)
    grace_minutes = Float(0.0, help="Minutes after the due date that still count as on time "
                          "(a slow upload, a clock that is a little off)").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float,
                                total_seconds_late: float) -> float | None:
        days = days_late(total_seconds_late, self.grace_minutes)
        if not days:
            return None
        # The plugin is made by AssignLatePenalties (its parent), which has the gradebook open
        # and knows the notebook being graded.
        step = self.parent
        notebook = step.gradebook.find_submission_notebook(
            step.notebook_id, step.assignment_id, student_id)
        share = min(1.0, days * self.percent_per_day / 100.0)
        penalty = round(share * notebook.max_score, 2)
        self.log.info("%s's %s is %.1f hours late: %d day(s) x %g%% of %g points = %g points "
                         "off (never more than its autograded score, %g)", student_id,
                         step.notebook_id, total_seconds_late / 3600, days,
                         self.percent_per_day, notebook.max_score, penalty, score)
        return penalty
