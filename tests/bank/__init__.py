"""A bank of learner submissions for the course's exercises: correct ones, plain bugs, exploits.

Each file ``tests/bank/<chapter>/<exercise>/<kind>_<name>.py`` (``<chapter>`` named as its folder
in ``source/``, e.g. ``ch02_data_parallel``) is the source of ONE solution cell, exactly as a
learner would type it into the exercise's solution cell. Beside the exercises' folders, the
chapter's ``naive.py`` holds the naive checks its exploits beat (:mod:`bank.naive`). The table
of exercises (:data:`EXERCISES`) is read from the chapters' sources, so a chapter adds only its
own folder here. A grading test assembles it into a tiny
notebook: ``SETUP`` + the entry + the chapter's real test cell (:func:`grading_cell`).

A file starts with header comment lines (all other lines are the learner's code)::

    # bank: <one sentence: what it does, and why it must get full marks / lose its points>
    # naive: course | allclose | none
    # gpu-only: yes        (optional; only where the entry needs a real GPU to matter)
    # autograde: nbgrader  (optional; the entry acts on the folder nbgrader's kernel runs in)

tests/test_bank.py judges each entry as ``nbgrader autograde`` would, through the judge's own
entry point (:func:`autograder.judge.judge_notebook`, what ``JudgeSubmission`` calls); an entry
marked ``autograde: nbgrader`` goes through a real ``nbgrader autograde`` instead, since what it
does happens in the autograded folder during nbgrader's Execute.

``naive`` names a naive check that the entry beats (scores on, though it is wrong); see
:mod:`bank.naive`. ``kind`` is ``ok`` (correct, full marks, ``naive: none``), ``wrong`` (a plain
bug) or ``exploit`` (wrong or not a real solution, and beats the named naive check; never ``none``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

BANK = Path(__file__).resolve().parent
ROOT = BANK.parents[1]                 # the repository

SETUP = "import numpy as np\nfrom numba import cuda\nimport autograder as ag\n"

_CHAPTER = re.compile(r"ch\d\d[a-z]?_[a-z0-9_]+")     # a chapter's folder: ch09_histogram, ch12c_capstone
_CHECK = re.compile(r"^ag\.problems\.(ch\d\d[a-z]?)\.(\w+)\.check\((\w+)\)\s*$")


def _cells(lines: list[str]) -> dict[str, tuple[int, dict]]:
    """grade_id -> (line of its ``# %%`` marker, nbgrader metadata) in a jupytext source."""
    found = {}
    for k, line in enumerate(lines):
        if line.startswith("# %%") and "nbgrader=" in line:
            meta = json.loads(line.split("nbgrader=", 1)[1])
            found[meta["grade_id"]] = (k, meta)
    return found


def exercises(root: Path = ROOT) -> dict[str, dict]:
    """Every graded exercise of the course, read from the chapters' sources (nothing lists them
    twice): a graded cell ``<exercise>_test`` whose first line is
    ``ag.problems.<module>.<problem>.check(<func>)``, the solution cell ``<exercise>_solution``
    and, where there is one, the speed cell ``<exercise>_speed``."""
    found: dict[str, dict] = {}
    for source in sorted((root / "source").glob("ch[0-9][0-9]*_*/ch[0-9][0-9]*_*.py")):
        chapter = source.parent.name
        if not _CHAPTER.fullmatch(chapter):
            continue
        lines = source.read_text().splitlines()
        cells = _cells(lines)
        for grade_id, (k, meta) in cells.items():
            if not (grade_id.endswith("_test") and meta.get("grade")):
                continue
            match = _CHECK.match(lines[k + 1]) if k + 1 < len(lines) else None
            exercise = grade_id[:-len("_test")]
            if match is None or f"{exercise}_solution" not in cells:
                raise ValueError(f"{source}: graded cell {grade_id!r} must start with "
                                 f"ag.problems.chNN.<problem>.check(<function>) and have a "
                                 f"{exercise}_solution cell")
            if exercise in found:
                raise ValueError(f"{source}: exercise {exercise!r} is also in {found[exercise]['chapter']}")
            found[exercise] = dict(
                chapter=chapter, module=match.group(1), problem=match.group(2),
                func=match.group(3), test_id=grade_id, solution_id=f"{exercise}_solution",
                speed_id=f"{exercise}_speed" if f"{exercise}_speed" in cells else None)
    return found


EXERCISES = exercises()

KINDS = ("ok", "wrong", "exploit")
NAIVE = ("course", "allclose", "none")
_HEADER = re.compile(r"^# (bank|naive|gpu-only|autograde):(.*)$")
_FILE = re.compile(r"^(ok|wrong|exploit)_[a-z0-9_]+\.py$")


class MalformedEntry(ValueError):
    """A bank file whose name or header does not follow the rules above."""


@dataclass(frozen=True)
class Entry:
    name: str           # the file's stem, e.g. "exploit_rebind_check"
    exercise: str       # a key of EXERCISES
    kind: str           # "ok", "wrong" or "exploit"
    path: Path
    code: str           # the whole cell source, header included
    naive: str          # "course", "allclose" or "none"
    gpu_only: bool
    note: str           # the "# bank:" sentence
    nbgrader: bool = False   # "# autograde: nbgrader": judged through a real nbgrader autograde

    @property
    def id(self) -> str:
        return f"{self.exercise}/{self.name}"

    @property
    def spec(self) -> dict:
        return EXERCISES[self.exercise]


def parse(path: Path) -> Entry:
    """Read one bank file; raise MalformedEntry on anything off."""
    path = Path(path)
    exercise, chapter = path.parent.name, path.parent.parent.name
    if exercise not in EXERCISES:
        raise MalformedEntry(f"{path}: folder {exercise!r} is not an exercise ({sorted(EXERCISES)})")
    if EXERCISES[exercise]["chapter"] != chapter:
        raise MalformedEntry(f"{path}: {exercise!r} is an exercise of "
                             f"{EXERCISES[exercise]['chapter']}, not of {chapter}")
    if not _FILE.match(path.name):
        raise MalformedEntry(f"{path}: name must be <ok|wrong|exploit>_<lowercase_name>.py")
    code = path.read_text()
    fields: dict[str, str] = {}
    for line in code.splitlines():
        m = _HEADER.match(line)
        if not m:
            break
        key, value = m.group(1), m.group(2).strip()
        if key in fields:
            raise MalformedEntry(f"{path}: header line '# {key}:' appears twice")
        fields[key] = value
    if not fields.get("bank"):
        raise MalformedEntry(f"{path}: must start with '# bank: <sentence>'")
    if fields.get("naive") not in NAIVE:
        raise MalformedEntry(f"{path}: needs '# naive: course|allclose|none' right after '# bank:' "
                             f"(got {fields.get('naive')!r})")
    if "gpu-only" in fields and fields["gpu-only"] != "yes":
        raise MalformedEntry(f"{path}: '# gpu-only:' may only say 'yes' (or be left out)")
    if "autograde" in fields and fields["autograde"] != "nbgrader":
        raise MalformedEntry(f"{path}: '# autograde:' may only say 'nbgrader' (or be left out)")
    kind = path.name.split("_", 1)[0]
    naive = fields["naive"]
    if kind == "exploit" and naive == "none":
        raise MalformedEntry(f"{path}: an exploit must name the naive check it beats")
    if kind == "ok" and naive != "none":
        raise MalformedEntry(f"{path}: a correct entry beats nothing: '# naive: none'")
    try:
        compile(code, str(path), "exec")
    except SyntaxError as exc:
        raise MalformedEntry(f"{path}: not valid Python: {exc}") from exc
    return Entry(name=path.stem, exercise=exercise, kind=kind, path=path, code=code, naive=naive,
                 gpu_only="gpu-only" in fields, note=fields["bank"],
                 nbgrader="autograde" in fields)


def entries() -> list[Entry]:
    """Every bank entry, sorted by exercise then name; raises MalformedEntry on a bad file."""
    found = []
    chapters = {spec["chapter"] for spec in EXERCISES.values()}
    for chapter in sorted(p for p in BANK.iterdir() if p.is_dir() and not p.name.startswith("_")):
        if chapter.name not in chapters:
            raise MalformedEntry(f"{chapter}: not a chapter's folder ({sorted(chapters)})")
        for folder in sorted(p for p in chapter.iterdir()
                             if p.is_dir() and not p.name.startswith("_")):
            if folder.name not in EXERCISES:
                raise MalformedEntry(f"{folder}: not an exercise folder ({sorted(EXERCISES)})")
            for path in sorted(folder.glob("*.py")):
                found.append(parse(path))
    return found


# ---- the chapters' real cells -----------------------------------------------------------------

def chapter_source(exercise: str) -> Path:
    chapter = EXERCISES[exercise]["chapter"]
    return ROOT / "source" / chapter / f"{chapter}.py"


def cell(exercise: str, grade_id: str) -> str:
    """The source of the chapter's code cell with this nbgrader grade_id (jupytext percent)."""
    lines = chapter_source(exercise).read_text().splitlines()
    if grade_id not in (cells := _cells(lines)):
        raise KeyError(f"no cell with grade_id {grade_id!r} in {chapter_source(exercise)}")
    return cell_body(lines, cells[grade_id][0])


def cell_body(lines: list[str], marker: int) -> str:
    """The source of the cell whose ``# %%`` marker is ``lines[marker]``: up to the next marker,
    trailing blank lines dropped."""
    body = []
    for rest in lines[marker + 1:]:
        if rest.startswith("# %%"):
            break
        body.append(rest)
    while body and not body[-1].strip():
        body.pop()
    return "\n".join(body) + "\n"


def grading_cell(exercise: str) -> str:
    """The exercise's graded test cell, hidden tests included (as nbgrader autograde runs it)."""
    return cell(exercise, EXERCISES[exercise]["test_id"])


def speed_cell(exercise: str) -> str | None:
    speed_id = EXERCISES[exercise]["speed_id"]
    return cell(exercise, speed_id) if speed_id else None


def notebook(exercise: str, code: str):
    """The one-exercise notebook an entry is graded in: ``SETUP``, the entry as the solution cell,
    the chapter's real test cell (hidden tests included, 3 points) and its speed cell if it has
    one (2 points), with nbgrader's metadata."""
    import nbformat

    spec = EXERCISES[exercise]

    def code_cell(source, **meta):
        c = nbformat.v4.new_code_cell(source)
        if meta:
            c.metadata["nbgrader"] = {"schema_version": 3, "solution": False, "task": False,
                                      "locked": True, **meta}
        return c

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# Bank: {exercise}"),
                code_cell(SETUP, grade=False, grade_id="setup"),
                code_cell(code, grade=False, solution=True, locked=False,
                          grade_id=spec["solution_id"]),
                code_cell(grading_cell(exercise), grade=True, grade_id=spec["test_id"], points=3)]
    if spec["speed_id"]:
        nb.cells.append(code_cell(speed_cell(exercise), grade=True, grade_id=spec["speed_id"],
                                  points=2))
    return nb
