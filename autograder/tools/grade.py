"""``aag grade NOTEBOOK``: a learner grades their own notebook with the instructor's judge (hidden
tests with a new seed each time, the sandbox, and on a GPU the speed test). The graded cells and
their points come from the course's release of the chapter, so a learner who edits a test cell
gains nothing."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from autograder.grading import sandbox
from autograder.tools import workspace as ws
from autograder.grading.judge import (CHECK_KINDS, CellResult, CheckCall, Settings,
                                      Session, cells_before, grade_cells, judge_exercise, on_gpu,
                                      parse_checks, speed_yardsticks, written_answer_id)

def with_hidden(checks: list[CheckCall]) -> list[CheckCall]:
    """A learner's copy has no hidden tests (the release strips them): every visible check implies
    its hidden one, so self-study grading is as strict as the instructor's."""
    out = list(checks)
    for c in checks:
        if c.kind == "check" and not any(k.problem == c.problem and k.kind == "check_hidden"
                                         for k in checks):
            out.append(CheckCall(c.problem, "check_hidden", c.func))
    out.sort(key=lambda c: CHECK_KINDS.index(c.kind))
    return out


def release_of(path: Path, nb) -> Path | None:
    """The release notebook (``course/<chapter>/<chapter>.ipynb`` in the repository) that the
    learner's notebook was copied from: by its folder or file name (the workspace mirrors
    ``course/``), else the release that shares the most grade cells with it (a renamed copy)."""
    from autograder.tools.workspace import UPDATED_TAG, default_course_dir
    course = default_course_dir()
    if not course.is_dir():
        return None
    stem = path.stem[:-len(UPDATED_TAG)] if path.stem.endswith(UPDATED_TAG) else path.stem
    for name in (path.parent.name, stem):
        candidate = course / name / f"{name}.ipynb"
        if candidate.is_file():
            return candidate
    import nbformat
    ids = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells} - {None}
    best, shared = None, 0
    for candidate in sorted(course.glob("*/*.ipynb")):
        try:
            release = nbformat.read(str(candidate), as_version=4)
        except Exception:      # noqa: BLE001 - an unreadable file is not the release
            continue
        found = len(ids & {g for _, g, _ in grade_cells(release)})
        if found > shared:
            best, shared = candidate, found
    return best


def _find_cell(nb, grade_id: str) -> int | None:
    """The index of the learner's cell with ``grade_id`` (nbgrader metadata, else the cell id:
    the release gives grade cells the grade id as cell id), or None."""
    for index, cell in enumerate(nb.cells):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return index
    for index, cell in enumerate(nb.cells):
        if cell.get("id") == grade_id and cell.cell_type == "code":
            return index
    return None


def graded_from_release(nb, release) -> list[tuple[int | None, str, list[CheckCall], float, str]]:
    """(index in the learner's notebook or None, grade id, the release's checks, the release's
    points, why it scores 0 or "") for every grade cell of the release. The learner's copy gives
    only the position (the cells before it are the code judged); what is checked and what it is
    worth come from the release, so deleting a grade cell, editing its check call to name another
    function, or changing its points in the metadata gains nothing."""
    rows = []
    for r_index, grade_id, checks in grade_cells(release):
        points = float(release.cells[r_index].metadata["nbgrader"].get("points", 0))
        index = _find_cell(nb, grade_id)
        why = ""
        release_text = "; ".join(f"ag.problems.{c.problem}.{c.kind}({c.func})" for c in checks)
        if index is None:
            why = (f"the graded cell `{grade_id}` is missing from your notebook (deleted?): it "
                   f"scores 0. Copy it back from the release (it calls {release_text}).")
        else:
            mine = {(c.problem, c.kind, c.func) for c in with_hidden(parse_checks(
                nb.cells[index].source))}
            if not all((c.problem, c.kind, c.func) in mine for c in checks):
                why = (f"the graded cell `{grade_id}` was edited: the release's cell calls "
                       f"{release_text}, and yours does not: it scores 0. Restore the cell as "
                       "the release has it.")
        rows.append((index, grade_id, checks, points, why))
    return rows


def main(argv: list[str] | None = None) -> int:
    import argparse

    import nbformat

    p = argparse.ArgumentParser(
        prog="aag grade", description="Grade your own notebook with the instructor's judge: your "
        "code runs in a fresh sandboxed process, hidden tests (with a new random seed each time) "
        "and, on a GPU, the speed test included. The graded cells and their points come from the "
        "course's release of the chapter. Save the notebook first.")
    p.add_argument("notebook", type=Path)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--no-sandbox", action="store_true", help="run without bubblewrap")
    args = p.parse_args(argv)
    if not args.notebook.is_file():
        print(f"aag grade: no notebook at {args.notebook}", file=sys.stderr)
        return 2
    nb = nbformat.read(str(args.notebook), as_version=4)
    from autograder.core.spec import speed_without_gpu
    settings = Settings(sandbox="off" if args.no_sandbox else "auto",
                        speed_without_gpu=speed_without_gpu("self-grade"), protected=())
    if not args.no_sandbox and sandbox.unavailable_reason() and not args.json:
        print(f"note: no sandbox ({sandbox.unavailable_reason()}); your code runs as a plain "
              "process, which is fine for grading your own work.")
    release_path = release_of(args.notebook.resolve(), nb)
    if release_path is not None:
        rows = graded_from_release(nb, nbformat.read(str(release_path), as_version=4))
    else:
        # Not a copy of a chapter of this course: the notebook's own grade cells, said so.
        print("aag grade: no release of this chapter found in the course, so the graded cells "
              "and points are your notebook's own", file=sys.stderr)
        rows = [(index, grade_id, checks,
                 float(nb.cells[index].metadata["nbgrader"].get("points", 0)), "")
                for index, grade_id, checks in grade_cells(nb)]
    if not rows:
        print("aag grade: this notebook has no graded exercises", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    results, total, earned, points_of, skipped = {}, 0.0, 0.0, {}, []
    from autograder.core.progress import Progress
    bar = Progress(len(rows), "aag grade", mode="off" if args.json else None, leave=False)
    # The speed tests' course reference and copy, timed before any of the notebook's code runs.
    yardsticks = speed_yardsticks([c for _, _, checks, _, why in rows if not why for c in checks],
                                  settings, bar.say)
    with Session() as session:   # one student process for the notebook, as in autograde
        for number, (index, grade_id, checks, points, why) in enumerate(rows, 1):
            bar.begin(grade_id)
            settings.progress = lambda text, g=grade_id: bar.say(f"{g}: {text}")
            if not on_gpu() and all(c.kind == "check_speed" for c in checks) and \
                    settings.speed_without_gpu == "not-applicable":
                if not args.json:
                    bar.write(f"[{number}/{len(rows)}] {grade_id} ({points:g} pt): needs a GPU to "
                              "time anything; not applicable here, left out of the total")
                skipped.append(grade_id)
                points_of[grade_id] = points
                continue
            if why:
                result = CellResult(grade_id, False, error=why)
            else:
                result = judge_exercise(cells_before(nb, index), with_hidden(checks), settings,
                                        grade_id, args.notebook.parent, session=session,
                                        yardsticks=yardsticks)
            results[grade_id], points_of[grade_id] = result, points
            total += points
            earned += points * result.passed
            if not args.json:
                lines = [f"[{number}/{len(rows)}] {grade_id} ({points:g} pt) "
                         f"{'✓' if result.passed else '✗'} {result.seconds:.1f} s"]
                lines += ["    " + line for line in result.lines]
                if not result.passed:
                    lines.append("    " + result.error.replace("\n", "\n    "))
                bar.write("\n".join(lines))
    bar.close()
    folder = args.notebook.resolve().parent
    if release_path is not None and release_path.parent.parent not in folder.parents \
            and (ws.repo_root() / "solutions") not in folder.parents:
        # What passed, beside the learner's notebook (not in the course's own release or
        # solutions): ag.reveal shows a written answer's model answer once every auto-graded
        # exercise of the chapter has passed (speed cells without a GPU not counted).
        from autograder.learner.answers import record_self_grade
        record_self_grade(folder, release_path.parent.name,
                          {g: r.passed for g, r in results.items()})
    if args.json:
        report = {g: {"passed": r.passed, "verdicts": r.lines, "error": r.error,
                      "points": points_of[g]} for g, r in results.items()}
        report.update({g: {"passed": None, "not_applicable": "speed cell: no GPU here",
                           "verdicts": [], "error": ""} for g in skipped})
        print(json.dumps(report, indent=1))
    else:
        missing = sum(1 for row in rows if row[4])
        print(f"\nScore: {earned:g} / {total:g} auto-graded points ({time.monotonic() - t0:.0f} s)"
              + (f"; {missing} graded cell{'s' * (missing != 1)} missing or edited (0 points)"
                 if missing else "") + _beyond_the_score(nb, {g: points_of[g] for g in skipped}))
    return 0


def _beyond_the_score(nb, skipped: dict[str, float]) -> str:
    """What the score leaves out: the written answers (graded by hand: their points, and how
    many are still unanswered) and the speed cells that need a GPU."""
    written = [cell for cell in nb.cells if written_answer_id(cell)]
    text = ""
    if written:
        points = sum(float(c.metadata["nbgrader"].get("points", 0)) for c in written)
        blank = sum(1 for c in written if not c.source.strip() or "YOUR ANSWER HERE" in c.source)
        text += (f"; {points:g} point{'s' * (points != 1)} await {len(written)} written "
                 f"answer{'s' * (len(written) != 1)}, graded by hand"
                 + (f" ({blank} not answered yet)" if blank else ""))
    if skipped:
        points = sum(skipped.values())
        text += f"; {points:g} speed point{'s' * (points != 1)} need a GPU (left out of the total)"
    return text
