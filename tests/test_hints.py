"""Hint ladders: does every exercise have three rungs, is no skeleton the solution, and does the
widget show one more rung per click (and fall back to text without ipywidgets)?"""

import ast
import builtins
import re
import textwrap
from pathlib import Path

import pytest

import autograder as ag
from autograder import hints

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "source").glob("ch*/ch*.py"))


def normalize(line: str) -> str:
    """A code line without its comment and without any whitespace."""
    return re.sub(r"\s+", "", line.split("#")[0])


def solutions() -> dict[str, tuple[list[str], str]]:
    """exercise -> (its solution lines, the chapter's learner-visible text), from the sources:
    the solution cell is the one before the first test cell that checks the exercise."""
    found = {}
    for path in SOURCES:
        text = path.read_text()
        visible = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", "", text, flags=re.S)
        visible = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", visible, flags=re.S)
        cells = re.split(r"(?m)^(?=# %%)", text)
        last_solution = None
        for cell in cells:
            header = cell.split("\n", 1)[0]
            if '"solution": true' in header and "[markdown]" not in header:
                last_solution = cell
            m = re.search(r"problems\.ch\d+\.(\w+)\.check\w*\(", cell)
            if '"grade": true' in header and m and last_solution and m.group(1) not in found:
                lines = []
                for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION",
                                        last_solution, flags=re.S):
                    lines += block.splitlines()
                found[m.group(1)] = (lines, visible)
    return found


def leaked_lines(skeleton: str, solution: list[str], visible: str) -> list[str]:
    """Solution lines (not given away by the notebook's own text) that the skeleton contains."""
    shown = re.sub(r"\s+", "", visible)
    keys = {normalize(s) for s in solution}
    keys = {k for k in keys if len(k) >= 12 and k not in shown}
    skeleton_lines = [normalize(s) for s in skeleton.splitlines()]
    return sorted(k for k in keys if any(k in line for line in skeleton_lines))


def test_every_exercise_has_a_ladder():
    """Does every exercise of autograder.problems.ALL have hints? (Lists the ones without.)"""
    absent = hints.missing()
    assert not absent, (
        f"{len(absent)} exercise(s) have no hint ladder: {', '.join(absent)}. Add a table per "
        "exercise to autograder/problems/chNN/hints.toml (keys think, read, skeleton; see ch01)")


def test_ladders_name_real_exercises_and_have_three_full_rungs():
    names = set(ag.problems.ALL)
    for name, rungs in hints.ladders().items():
        assert name in names, f"hints for {name!r}, which is not an exercise"
        assert [r.key for r in rungs] == ["think", "read", "skeleton"]
        assert len(rungs[0].text) > 80, f"{name}: the first rung says too little"
        assert "PMPP" in rungs[1].text, f"{name}: the second rung must name a PMPP section"
        assert "____" in rungs[2].text, f"{name}: a skeleton has blanks"
        ast.parse(textwrap.dedent(rungs[2].text))    # a skeleton is Python: blanks are names


def test_the_solution_sources_are_found():
    """The leak check below is only as good as this: it must see the solutions of chapters 1-9."""
    found = solutions()
    for name in ("saxpy", "tiled_matmul", "occupancy", "histogram_aggregate", "conv2d_tiled"):
        assert name in found and len(found[name][0]) >= 1, name
    assert len(set(found) & set(hints.ladders())) >= 31


def test_no_skeleton_contains_a_solution_line():
    found = solutions()
    leaks = {}
    for name, rungs in hints.ladders().items():
        if name in found:
            lines, visible = found[name]
            bad = leaked_lines(rungs[2].text, lines, visible)
            if bad:
                leaks[name] = bad
    assert not leaks, f"skeletons that give away solution lines: {leaks}"


def test_the_leak_check_catches_a_leak():
    solution = ["    i = cuda.grid(1)", "    if i < out.size:", "        out[i] = a * x[i] + y[i]"]
    skeleton = "i = ____\nif ____:\n    out[i] = a*x[i] + y[i]   # oops"
    assert leaked_lines(skeleton, solution, visible="") == ["out[i]=a*x[i]+y[i]"]
    # a line the notebook itself shows is not a secret
    assert leaked_lines(skeleton, solution, visible="`out[i] = a * x[i] + y[i]`") == []


def test_hint_reveals_one_more_rung_per_call():
    hints.reset("saxpy")
    first = hints.hint("saxpy")
    assert "aag-visual-hints" in first._dom_classes and "aag-visual" in first._dom_classes
    bundle = first._repr_mimebundle_()
    assert "1. What to think about" in bundle["text/plain"]
    assert "2. Where" not in bundle["text/plain"]
    assert 'class="aag-visual aag-visual-hints"' in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    second = hints.hint("saxpy")
    assert "PMPP §2.3" in second._repr_mimebundle_()["text/plain"]
    assert "____" not in second._repr_mimebundle_()["text/plain"]


def test_next_hint_button_reveals_the_skeleton_and_stops():
    hints.reset("blur")
    box = hints.hint("blur")
    button = [c for c in box.children if hasattr(c, "on_click")][0]
    shown = box.children[1]
    assert "What to think about" in shown.value and "skeleton" not in shown.value
    button.click()
    button.click()
    assert "A skeleton" in shown.value and "____" in shown.value
    assert button.disabled
    button.click()                  # past the last rung: nothing breaks, nothing repeats
    assert shown.value.count("A skeleton") == 1


def test_rung_argument_and_unknown_names():
    hints.reset()
    assert "A skeleton" in repr(hints.HintText("saxpy", 3))
    box = hints.hint("matmul_naive", rung=3)
    assert "A skeleton" in box.children[1].value
    with pytest.raises(KeyError, match="matmul_naive"):
        hints.hint("matmul_naiv")
    with pytest.raises(ValueError):
        hints.hint("saxpy", rung=4)


def test_text_fallback_without_ipywidgets(monkeypatch):
    real_import = builtins.__import__

    def no_widgets(name, *args, **kwargs):
        if name.startswith("ipywidgets"):
            raise ImportError("no ipywidgets here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_widgets)
    hints.reset("histogram_global")
    shown = hints.hint("histogram_global")
    assert isinstance(shown, hints.HintText)
    assert shown._repr_html_().startswith('<div class="aag-visual aag-visual-hints"')
    assert "What to think about" in repr(shown)
    assert "cuda.atomic.add(____" in repr(hints.hint("histogram_global", rung=3))
