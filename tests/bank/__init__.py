"""A bank of learner submissions for the chapter 1-5 exercises: correct ones, plain bugs, exploits.

Each file ``tests/bank/<exercise>/<kind>_<name>.py`` is the source of ONE solution cell, exactly as
a learner would type it into the exercise's solution cell. A grading test assembles it into a tiny
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
                        solution_id="rgb_to_gray_solution", speed_id="rgb_to_gray_speed"),
    "blur": dict(chapter="ch03_multidimensional", module="ch03", problem="blur",
                 func="blur_kernel", test_id="blur_test", solution_id="blur_solution",
                 speed_id="blur_speed"),
    "matmul_naive": dict(chapter="ch03_multidimensional", module="ch03", problem="matmul_naive",
                         func="matmul_kernel", test_id="matmul_naive_test",
                         solution_id="matmul_naive_solution", speed_id=None),
    "image_time_bound": dict(chapter="ch03_multidimensional", module="ch03",
                             problem="image_time_bound", func="image_time_bound",
                             test_id="image_time_bound_test",
                             solution_id="image_time_bound_solution", speed_id=None),
    "tiled_matmul": dict(chapter="ch05_memory_locality", module="ch05", problem="tiled_matmul",
                         func="tiled_matmul_kernel", test_id="tiled_matmul_test",
                         solution_id="tiled_matmul_solution", speed_id="tiled_matmul_speed"),
    "matmul_time_bound": dict(chapter="ch05_memory_locality", module="ch05",
                              problem="matmul_time_bound", func="matmul_time_bound",
                              test_id="matmul_time_bound_test",
                              solution_id="matmul_time_bound_solution", speed_id=None),
    # ---- chapter 4 ----
    "peak_figures": dict(chapter="ch04_architecture", module="ch04", problem="peak_figures",
                         func="peak_figures", test_id="peak_figures_test",
                         solution_id="peak_figures_solution", speed_id=None),
    "divergent": dict(chapter="ch04_architecture", module="ch04", problem="divergent",
                      func="divergent_kernel", test_id="divergent_test",
                      solution_id="divergent_solution", speed_id=None),
    "uniform": dict(chapter="ch04_architecture", module="ch04", problem="uniform",
                    func="uniform_kernel", test_id="uniform_test", solution_id="uniform_solution",
                    speed_id="uniform_speed"),
    "occupancy": dict(chapter="ch04_architecture", module="ch04", problem="occupancy",
                      func="occupancy", test_id="occupancy_test", solution_id="occupancy_solution",
                      speed_id=None),
    # ---- chapter 6 ----
    "transpose_naive": dict(chapter="ch06_performance", module="ch06", problem="transpose_naive",
                            func="transpose_naive_kernel", test_id="transpose_naive_test",
                            solution_id="transpose_naive_solution", speed_id=None),
    "sectors_per_warp": dict(chapter="ch06_performance", module="ch06",
                             problem="sectors_per_warp", func="sectors_per_warp",
                             test_id="sectors_per_warp_test",
                             solution_id="sectors_per_warp_solution", speed_id=None),
    "transpose_tiled": dict(chapter="ch06_performance", module="ch06", problem="transpose_tiled",
                            func="transpose_tiled_kernel", test_id="transpose_tiled_test",
                            solution_id="transpose_tiled_solution",
                            speed_id="transpose_tiled_speed"),
    "matmul_register_tiled": dict(chapter="ch06_performance", module="ch06",
                                  problem="matmul_register_tiled",
                                  func="matmul_register_tiled_kernel",
                                  test_id="matmul_register_tiled_test",
                                  solution_id="matmul_register_tiled_solution",
                                  speed_id="matmul_register_tiled_speed"),
    # ---- chapter 7 ----
    "conv2d_basic": dict(chapter="ch07_convolution", module="ch07", problem="conv2d_basic",
                         func="conv2d_basic_kernel", test_id="conv2d_basic_test",
                         solution_id="conv2d_basic_solution", speed_id=None),
    "conv2d_constant": dict(chapter="ch07_convolution", module="ch07", problem="conv2d_constant",
                            func="make_conv2d_constant", test_id="conv2d_constant_test",
                            solution_id="conv2d_constant_solution", speed_id=None),
    "conv2d_tiled": dict(chapter="ch07_convolution", module="ch07", problem="conv2d_tiled",
                         func="make_conv2d_tiled", test_id="conv2d_tiled_test",
                         solution_id="conv2d_tiled_solution", speed_id="conv2d_tiled_speed"),
    "conv_time_bounds": dict(chapter="ch07_convolution", module="ch07", problem="conv_time_bounds",
                             func="conv_time_bounds", test_id="conv_time_bounds_test",
                             solution_id="conv_time_bounds_solution", speed_id=None),
    # ---- chapter 8 ----
    "stencil_basic": dict(chapter="ch08_stencil", module="ch08", problem="stencil_basic",
                          func="stencil_basic_kernel", test_id="stencil_basic_test",
                          solution_id="stencil_basic_solution", speed_id=None),
    "stencil_intensity": dict(chapter="ch08_stencil", module="ch08", problem="stencil_intensity",
                              func="stencil_intensity", test_id="stencil_intensity_test",
                              solution_id="stencil_intensity_solution", speed_id=None),
    "stencil_tiled": dict(chapter="ch08_stencil", module="ch08", problem="stencil_tiled",
                          func="stencil_tiled_kernel", test_id="stencil_tiled_test",
                          solution_id="stencil_tiled_solution", speed_id=None),
    "stencil_coarsened": dict(chapter="ch08_stencil", module="ch08", problem="stencil_coarsened",
                              func="stencil_coarsened_kernel", test_id="stencil_coarsened_test",
                              solution_id="stencil_coarsened_solution",
                              speed_id="stencil_coarsened_speed"),
    # ---- chapter 9 ----
    "histogram_global": dict(chapter="ch09_histogram", module="ch09", problem="histogram_global",
                             func="histogram_global_kernel", test_id="histogram_global_test",
                             solution_id="histogram_global_solution", speed_id=None),
    "histogram_private": dict(chapter="ch09_histogram", module="ch09",
                              problem="histogram_private", func="histogram_private_kernel",
                              test_id="histogram_private_test",
                              solution_id="histogram_private_solution",
                              speed_id="histogram_private_speed"),
    "histogram_aggregate": dict(chapter="ch09_histogram", module="ch09",
                                problem="histogram_aggregate", func="histogram_aggregate_kernel",
                                test_id="histogram_aggregate_test",
                                solution_id="histogram_aggregate_solution",
                                speed_id="histogram_aggregate_speed"),
    "histogram_time_bound": dict(chapter="ch09_histogram", module="ch09",
                                 problem="histogram_time_bound", func="histogram_time_bound",
                                 test_id="histogram_time_bound_test",
                                 solution_id="histogram_time_bound_solution", speed_id=None),
    # ---- chapter 10 ----
    "reduce_tree": dict(chapter="ch10_reduction", module="ch10", problem="reduce_tree",
                        func="reduce_tree_kernel", test_id="reduce_tree_test",
                        solution_id="reduce_tree_solution", speed_id=None),
    "warp_sums": dict(chapter="ch10_reduction", module="ch10", problem="warp_sums",
                      func="warp_sums_kernel", test_id="warp_sums_test",
                      solution_id="warp_sums_solution", speed_id=None),
    "reduce_sum": dict(chapter="ch10_reduction", module="ch10", problem="reduce_sum",
                       func="reduce_sum_kernel", test_id="reduce_sum_test",
                       solution_id="reduce_sum_solution", speed_id="reduce_sum_speed"),
    "reduce_time_bound": dict(chapter="ch10_reduction", module="ch10",
                              problem="reduce_time_bound", func="reduce_time_bound",
                              test_id="reduce_time_bound_test",
                              solution_id="reduce_time_bound_solution", speed_id=None),
    # ---- chapter 11 ----
    "kogge_stone": dict(chapter="ch11_scan", module="ch11", problem="kogge_stone",
                        func="kogge_stone_kernel", test_id="kogge_stone_test",
                        solution_id="kogge_stone_solution", speed_id=None),
    "scan_hierarchical": dict(chapter="ch11_scan", module="ch11", problem="scan_hierarchical",
                              func="scan_hierarchical", test_id="scan_hierarchical_test",
                              solution_id="scan_hierarchical_solution",
                              speed_id="scan_hierarchical_speed"),
    # ---- chapter 12 ----
    "co_rank": dict(chapter="ch12_merge", module="ch12", problem="co_rank", func="co_rank",
                    test_id="co_rank_test", solution_id="co_rank_solution", speed_id=None),
    "merge_basic": dict(chapter="ch12_merge", module="ch12", problem="merge_basic",
                        func="merge_basic_kernel", test_id="merge_basic_test",
                        solution_id="merge_basic_solution", speed_id=None),
    "merge_time_bound": dict(chapter="ch12_merge", module="ch12", problem="merge_time_bound",
                             func="merge_time_bound", test_id="merge_time_bound_test",
                             solution_id="merge_time_bound_solution", speed_id=None),
    "merge_tiled": dict(chapter="ch12_merge", module="ch12", problem="merge_tiled",
                        func="merge_tiled_kernel", test_id="merge_tiled_test",
                        solution_id="merge_tiled_solution", speed_id="merge_tiled_speed"),
}

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
