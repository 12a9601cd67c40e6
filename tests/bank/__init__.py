"""A bank of learner submissions for the chapter 1-5 exercises: correct ones, plain bugs, exploits.

Each file ``tests/bank/<exercise>/<kind>_<name>.py`` is the source of ONE solution cell, exactly as
a learner would type it into the exercise's solution cell. A grading test assembles it into a tiny
notebook: ``SETUP`` + the entry + the chapter's real test cell (:func:`grading_cell`).

A file starts with header comment lines (all other lines are the learner's code)::

    # bank: <one sentence: what it does, and why it must get full marks / lose its points>
    # naive: course | allclose | none
    # gpu-only: yes        (optional; only where the entry needs a real GPU to matter)

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

EXERCISES = {
    "amdahl": dict(chapter="ch01_introduction", module="ch01", problem="amdahl",
                   func="amdahl_speedup", test_id="amdahl_test", solution_id="amdahl_solution",
                   speed_id=None),
    "thread_ids": dict(chapter="ch01_introduction", module="ch01", problem="thread_ids",
                       func="thread_ids", test_id="thread_ids_test",
                       solution_id="thread_ids_solution", speed_id=None),
    "saxpy": dict(chapter="ch01_introduction", module="ch01", problem="saxpy", func="saxpy",
                  test_id="saxpy_test", solution_id="saxpy_solution", speed_id=None),
    "vector_add": dict(chapter="ch02_data_parallel", module="ch02", problem="vector_add",
                       func="add_vectors", test_id="vector_add_test",
                       solution_id="vector_add_solution", speed_id=None),
    "grid_stride": dict(chapter="ch02_data_parallel", module="ch02",
                        problem="vector_add_grid_stride", func="vector_add_grid_stride",
                        test_id="grid_stride_test", solution_id="grid_stride_solution",
                        speed_id="grid_stride_speed"),
    "rgb_to_gray": dict(chapter="ch03_multidimensional", module="ch03", problem="rgb_to_gray",
                        func="rgb_to_gray_kernel", test_id="rgb_to_gray_test",
                        solution_id="rgb_to_gray_solution", speed_id=None),
    "blur": dict(chapter="ch03_multidimensional", module="ch03", problem="blur",
                 func="blur_kernel", test_id="blur_test", solution_id="blur_solution",
                 speed_id=None),
    "matmul_naive": dict(chapter="ch03_multidimensional", module="ch03", problem="matmul_naive",
                         func="matmul_kernel", test_id="matmul_naive_test",
                         solution_id="matmul_naive_solution", speed_id=None),
    "tiled_matmul": dict(chapter="ch05_memory_locality", module="ch05", problem="tiled_matmul",
                         func="tiled_matmul_kernel", test_id="tiled_matmul_test",
                         solution_id="tiled_matmul_solution", speed_id=None),
    "matmul_time_bound": dict(chapter="ch05_memory_locality", module="ch05",
                              problem="matmul_time_bound", func="matmul_time_bound",
                              test_id="matmul_time_bound_test",
                              solution_id="matmul_time_bound_solution", speed_id=None),
}

KINDS = ("ok", "wrong", "exploit")
NAIVE = ("course", "allclose", "none")
_HEADER = re.compile(r"^# (bank|naive|gpu-only):(.*)$")
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

    @property
    def id(self) -> str:
        return f"{self.exercise}/{self.name}"

    @property
    def spec(self) -> dict:
        return EXERCISES[self.exercise]


def parse(path: Path) -> Entry:
    """Read one bank file; raise MalformedEntry on anything off."""
    path = Path(path)
    exercise = path.parent.name
    if exercise not in EXERCISES:
        raise MalformedEntry(f"{path}: folder {exercise!r} is not an exercise ({sorted(EXERCISES)})")
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
                 gpu_only="gpu-only" in fields, note=fields["bank"])


def entries() -> list[Entry]:
    """Every bank entry, sorted by exercise then name; raises MalformedEntry on a bad file."""
    found = []
    for folder in sorted(p for p in BANK.iterdir() if p.is_dir() and not p.name.startswith("_")):
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
    for k, line in enumerate(lines):
        if not line.startswith("# %%") or "nbgrader=" not in line:
            continue
        meta = json.loads(line.split("nbgrader=", 1)[1])
        if meta.get("grade_id") != grade_id:
            continue
        body = []
        for rest in lines[k + 1:]:
            if rest.startswith("# %%"):
                break
            body.append(rest)
        while body and not body[-1].strip():
            body.pop()
        return "\n".join(body) + "\n"
    raise KeyError(f"no cell with grade_id {grade_id!r} in {chapter_source(exercise)}")


def grading_cell(exercise: str) -> str:
    """The exercise's graded test cell, hidden tests included (as nbgrader autograde runs it)."""
    return cell(exercise, EXERCISES[exercise]["test_id"])


def speed_cell(exercise: str) -> str | None:
    speed_id = EXERCISES[exercise]["speed_id"]
    return cell(exercise, speed_id) if speed_id else None
