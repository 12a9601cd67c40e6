"""The text a learner reads speaks of the GPU and their code, never of the project's history.

Learner-facing text: the chapters' sources (their markdown and code, which the release and the
solutions are built from), the hint ladders, and the strings the notebook helpers print
(``autograder/learner``: string constants only, not comments or docstrings). Words that belong to
the engineering log (targets aimed for and missed, "the notebook's run" against "the bench", the
benchmark command's name, issues and sessions, notes to self) must not appear there: a learner
gets one set of measured figures, stated as facts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HISTORY = re.compile(
    r"aimed for|neither target|targets? (?:was|were)(?: not)? met|notebook's run|aag bench"
    r"|in the bench|\(bench\)|the bench[;,)]|the issue|this session|\bTODO\b|\bFIXME\b",
    re.IGNORECASE)


def _learner_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the string constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def _texts():
    for path in sorted((REPO / "source").glob("ch*/ch*.py")):
        yield path, list(enumerate(path.read_text().splitlines(), 1))
    for path in sorted((REPO / "autograder" / "problems").glob("ch*/hints.toml")):
        yield path, list(enumerate(path.read_text().splitlines(), 1))
    for path in sorted((REPO / "autograder" / "learner").rglob("*.py")):
        yield path, _learner_strings(path)


@pytest.mark.parametrize("path, lines", list(_texts()),
                         ids=lambda v: str(v.relative_to(REPO)) if isinstance(v, Path) else "")
def test_no_project_history_in_learner_text(path, lines):
    found = [f"{path.relative_to(REPO)}:{n}: {text.strip()[:120]}" for n, text in lines
             if HISTORY.search(text)]
    assert not found, "\n".join(found)


def test_the_check_can_fail():
    assert HISTORY.search("The course aimed for 2× and neither target was met")
    assert HISTORY.search("0.255 ms (the bench; 4214 GB/s in the notebook's run)")
    assert not HISTORY.search("a warp issues one instruction for all its lanes")


def test_device_functions_are_taught_early():
    """Device functions were first met in chapter 12's co-rank search; chapter 2 or 3 introduces
    them, with a cell that runs one."""
    first = next(path.parent.name for path in sorted((REPO / "source").glob("ch*/ch*.py"))
                 if "@cuda.jit(device=True)" in path.read_text())
    assert first in ("ch02_data_parallel", "ch03_multidimensional"), first


def _chapter_headers() -> dict[str, tuple[str, str]]:
    """chapter number ("9", or "12c" for a unit placed after chapter 12) -> (what it assumes,
    hours), from the top of each chapter's source."""
    found = {}
    for path in sorted((REPO / "source").glob("ch*/ch*.py")):
        text = re.sub(r"\n# ", " ", path.read_text())
        number = re.search(r"# Chapter (\d+[a-z]?) ·", text).group(1)
        head = re.search(r"\*\*Before you start:\*\* (.*?)\. \*\*Time:\*\* about ([\d.]+) hours?",
                         text)
        assert head, f"{path.name} does not say at its top what it assumes and how long it takes"
        found[number] = head.groups()
    return found


def test_every_chapter_says_what_it_assumes_and_how_long_and_the_readme_lists_them():
    headers = _chapter_headers()
    readme = (REPO / "README.md").read_text()
    for number, (assumes, hours) in headers.items():
        row = re.search(rf"^\| {number} · .*\| (.*) \| ([\d.]+) h \|$", readme, re.M)
        assert row and row.groups() == (assumes, hours), (number, row and row.groups())


# ---- bound exercises ask for a derivation, not for re-typing ---------------------------------------

_SPAN = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)


def _formula_spans(markdown: str) -> list[str]:
    """Code spans and blocks of markdown that spell out arithmetic on named quantities: a product
    (·) together with a division, the shape every bound's formula has. A general law such as the
    roofline's `time ≥ max(F / peak, Q / bandwidth)` names no product and stays allowed."""
    return [span for span in _SPAN.findall(markdown) if "·" in span and "/" in span]


def _bound_exercise_text() -> list[tuple[str, str]]:
    """(exercise, the learner's markdown from the section before it up to its solution cell) for
    every exercise that asks for a time bound."""
    out = []
    for path in sorted((REPO / "source").glob("ch*/ch*.py")):
        text = path.read_text()
        for match in re.finditer(r'"grade_id": "(\w+_bounds?)_solution"', text):
            before = text[:match.start()]
            start = before.rfind("# ## Predict")
            start = start if start >= 0 else before.rfind("# ## Exercise")
            markdown = "\n".join(line[2:] for line in before[start:].splitlines()
                                 if line.startswith("# ") and not line.startswith("# %%"))
            out.append((f"{path.parent.name}:{match.group(1)}", markdown))
    return out


def test_bound_exercises_do_not_print_the_formula_they_ask_for():
    """The "bound" exercises give the facts (what each kernel loads, what waits for what) and ask
    the learner to write the bound: the text before the solution cell shows no formula to re-type."""
    exercises = _bound_exercise_text()
    assert len(exercises) >= 6, exercises
    found = {name: _formula_spans(markdown) for name, markdown in exercises}
    assert not any(found.values()), {k: v for k, v in found.items() if v}


def test_a_printed_bound_formula_is_found():
    printed = "Then\n```\ntime ≥ height · width · (bytes_in + bytes_out) / bandwidth\n```\n"
    assert _formula_spans(printed)
    assert _formula_spans("is `4 · (in_tile² / out_tile² + 1)` bytes")
    assert not _formula_spans("```\ntime ≥ max(F / peak FLOP/s,  Q / bandwidth)\n```")
