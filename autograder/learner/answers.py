"""``ag.reveal("<answer id>")``: a written answer's model answer, for a learner studying alone,
once their own self-grade of the chapter has passed.

A written answer ("predict, then measure") is graded by hand in a class. A learner working alone
has no grader, so after ``./aag grade`` has passed every auto-graded exercise of the chapter
(speed cells without a GPU are not counted), ``ag.reveal`` shows the chapter's model answer to
set theirs against; never before, so that it cannot stand in for their own thinking. ``aag
grade`` keeps what passed in ``.aag-self-grade.json`` beside the notebook, which the notebook's
kernel reads (its working folder is the notebook's).

Model answers are in the course's worked solutions (``solutions/`` of a clone of the course),
never in the release that learners of a class receive (``course/``): in a class's environment,
where only the package is installed, there is nothing to reveal and ``ag.reveal`` says so.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

RECORD = ".aag-self-grade.json"


def solutions_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "solutions"


def record_self_grade(folder: Path, chapter: str, passed: dict[str, bool]) -> None:
    """Remember, beside the notebook, which auto-graded cells of ``chapter`` passed."""
    path = Path(folder) / RECORD
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data[chapter] = {"passed": passed, "at": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        path.write_text(json.dumps(data, indent=1) + "\n")
    except OSError:
        pass                   # a read-only folder costs only the reveal


def model_answer(answer_id: str) -> tuple[str, str] | None:
    """(chapter, model answer's text) of a written answer's grade id, from the worked solutions."""
    import nbformat

    from autograder.grading.judge import written_answer_id
    for path in sorted(solutions_dir().glob("ch*/ch*.ipynb")):
        for cell in nbformat.read(str(path), as_version=4).cells:
            if written_answer_id(cell) == answer_id:
                return path.parent.name, cell.source
    return None


def reveal(answer_id: str, folder: Path | None = None):
    """Show the model answer of the written answer ``answer_id`` (its cell's id, e.g.
    "image_gap_answer") if this chapter's self-grade passed; otherwise say what to do first."""
    if not solutions_dir().is_dir():
        print("Model answers are not part of this installation: in a class, your instructor "
              "grades your written answer (and may discuss it in your feedback).")
        return None
    found = model_answer(answer_id)
    if found is None:
        print(f"No written answer is called {answer_id!r}: use the id in the answer cell's "
              "header (for example \"image_gap_answer\").")
        return None
    chapter, text = found
    try:
        record = json.loads((Path(folder or Path.cwd()) / RECORD).read_text()).get(chapter, {})
    except (OSError, ValueError):
        record = {}
    passed = record.get("passed") or {}
    if not passed or not all(passed.values()):
        failing = sorted(g for g, ok in passed.items() if not ok)
        print("Not yet: the model answer opens once `./aag grade` on this chapter's notebook has "
              "passed every auto-graded exercise"
              + (f" (still failing: {', '.join(failing)})" if failing else
                 " (no self-grade of it found beside this notebook)")
              + ". Write your own answer first: it is what you learn from.")
        return None
    try:
        from IPython.display import Markdown
        return Markdown(text)
    except ImportError:
        print(text)
        return None
