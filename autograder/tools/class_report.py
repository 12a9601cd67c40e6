"""``aag class-report ASSIGNMENT``: how a class did, exercise by exercise, after autograding.

For every graded cell of the assignment (an exercise's test, its speed test, a written answer):
how many learners were graded, how many got full marks, the commonest reasons the others did not
(the first line that says why, from the verdict in their autograded notebook, numbers replaced by
``N`` so that the same mistake on other sizes counts once), and the submissions the judge flagged
for a look (code that reaches into the harness, a speed above the memory system's limit...).
Submissions that ``aag grade-all`` could not grade are listed too.

    aag class-report ch02_data_parallel                  # a table
    aag class-report ch02_data_parallel --plot rates.png --json report.json

``instructor/class-report.ipynb`` shows the same as a table and a plot in JupyterLab. Reads
``gradebook.db``, ``autograded/*/<assignment>/`` and ``.aag/grade-all/<assignment>.json``;
writes nothing in the course.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading import safe_files


@dataclass
class CellStats:
    """One graded cell across the class."""
    cell: str
    points: float
    manual: bool = False                 # a written answer, graded by hand
    graded: int = 0                      # learners with a score for it
    full: int = 0                        # ... with full marks
    waiting: int = 0                     # written answers not graded by hand yet
    reasons: Counter = field(default_factory=Counter)   # why the others lost points
    flagged: list = field(default_factory=list)          # (learner, flag)

    @property
    def pass_rate(self) -> float:
        return self.full / self.graded if self.graded else 0.0


@dataclass
class ClassReport:
    assignment: str
    learners: int
    cells: dict[str, CellStats]
    not_graded: dict[str, str]           # learner -> why (from aag grade-all)


def reason(text: str) -> str:
    """The line of a failing verdict that says why, with numbers as ``N``: the judge's verdicts
    start "✗ <problem> failed on <sizes>, launched as ...:" and say why on the next line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "failed (no message)"
    line = lines[0]
    if len(lines) > 1 and line.endswith(":") and " failed" in line:
        line = lines[1]
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)
    line = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return line[:140]


def _errors(nb_bytes: bytes | None) -> dict[str, str]:
    """grade_id -> the error text of that graded cell in an autograded notebook."""
    if not nb_bytes:
        return {}
    import nbformat
    nb = nbformat.reads(nb_bytes.decode("utf-8", "replace"), as_version=4)
    out = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade"):
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                ename, evalue = o.get("ename", ""), o.get("evalue", "")
                # the judge's verdicts are CheckFailed: their text says it all
                out[meta["grade_id"]] = (evalue if ename in ("", "CheckFailed")
                                         else f"{ename}: {evalue}" if evalue else ename)
                break
    return out


def collect(course: Path, assignment: str) -> ClassReport:
    from nbgrader.api import Gradebook

    from autograder.tools.build import ensure_tools_on_path

    course = Path(course).resolve()
    ensure_tools_on_path()
    cells: dict[str, CellStats] = {}
    learners = 0
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        found = gb.find_assignment(assignment)
        for nb in found.notebooks:
            for cell in nb.grade_cells:
                cells[cell.name] = CellStats(cell.name, cell.max_score,
                                             manual=cell.cell_type == "markdown")
        for submission in found.submissions:
            learners += 1
            folder = course / "autograded" / submission.student.id / assignment
            report = json.loads(safe_files.read_file(folder / "judge.json") or b"{}")
            for notebook in submission.notebooks:
                errors = _errors(safe_files.read_file(folder / f"{notebook.name}.ipynb"))
                for grade in notebook.grades:
                    stats = cells[grade.name]
                    if grade.needs_manual_grade:
                        stats.waiting += 1
                        continue
                    stats.graded += 1
                    if grade.score is not None and grade.score >= grade.max_score:
                        stats.full += 1
                    else:
                        stats.reasons[reason(errors.get(grade.name, "scored less than full marks"))] += 1
                    for flag in report.get(grade.name, {}).get("flags", []):
                        stats.flagged.append((submission.student.id, flag))
    runs = json.loads(safe_files.read_file(course / ".aag" / "grade-all" / f"{assignment}.json")
                      or b"{}")
    not_graded = {k: v.get("why", "") for k, v in runs.items() if not v.get("graded")}
    return ClassReport(assignment, learners, cells, not_graded)


def table(report: ClassReport, reasons: int = 3) -> str:
    """The report as text: a row per graded cell, then the flagged and the ungraded."""
    rows = [f"{report.assignment}: {report.learners} learners graded"
            + (f", {len(report.not_graded)} not graded" if report.not_graded else ""),
            f"{'cell':28} {'points':>6} {'full marks':>14}  commonest reasons for losing points"]
    for s in report.cells.values():
        if s.manual:
            rate = f"{s.waiting} to grade" if s.waiting else f"{s.full}/{s.graded}"
        else:
            rate = f"{s.full}/{s.graded} ({100 * s.pass_rate:.0f}%)"
        why = "; ".join(f"{n}× {r}" for r, n in s.reasons.most_common(reasons))
        rows.append(f"{s.cell:28} {s.points:6g} {rate:>14}  {why}")
    flagged = [(s.cell, who, flag) for s in report.cells.values() for who, flag in s.flagged]
    if flagged:
        rows.append("flagged for a look:")
        rows += [f"  {who}, {cell}: {flag}" for cell, who, flag in flagged]
    if report.not_graded:
        rows.append("not graded (run aag grade-all again, or look at why):")
        rows += [f"  {who}: {why.splitlines()[0] if why else ''}" for who, why in report.not_graded.items()]
    return "\n".join(rows)


def plot(report: ClassReport, ax=None):
    """Full-marks rate per autograded cell, as horizontal bars; returns the figure."""
    import matplotlib.pyplot as plt

    auto = [s for s in report.cells.values() if not s.manual]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.45 * len(auto) + 1.2))
    names = [s.cell for s in auto][::-1]
    rates = [100 * s.pass_rate for s in auto][::-1]
    bars = ax.barh(names, rates, color="#4c8bf5")
    for bar, s in zip(bars, auto[::-1]):
        ax.text(min(bar.get_width() + 1, 92), bar.get_y() + bar.get_height() / 2,
                f"{s.full}/{s.graded}", va="center", fontsize=9)
    ax.set_xlim(0, 100)
    ax.set_xlabel("learners with full marks (%)")
    ax.set_title(f"{report.assignment}: {report.learners} learners")
    ax.figure.tight_layout()
    return ax.figure


def as_json(report: ClassReport) -> dict:
    return {"assignment": report.assignment, "learners": report.learners,
            "not_graded": report.not_graded,
            "cells": {k: {"points": s.points, "manual": s.manual, "graded": s.graded,
                          "full": s.full, "waiting": s.waiting,
                          "reasons": s.reasons.most_common(), "flagged": s.flagged}
                      for k, s in report.cells.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aag class-report", description="How a class did on an "
                                "assignment, exercise by exercise, after autograding.")
    p.add_argument("assignment")
    p.add_argument("--course", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    p.add_argument("--plot", type=Path, help="save the pass-rate plot (PNG) here")
    p.add_argument("--json", type=Path, help="save the report as JSON here")
    args = p.parse_args(argv)
    if not (args.course / "gradebook.db").is_file():
        print(f"aag class-report: no gradebook.db in {args.course.resolve()}", file=sys.stderr)
        return 2
    try:
        report = collect(args.course, args.assignment)
    except Exception as exc:     # no such assignment: nbgrader's MissingEntry
        print(f"aag class-report: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(table(report))
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        plot(report).savefig(args.plot, dpi=120)
    if args.json:
        args.json.write_text(json.dumps(as_json(report), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
