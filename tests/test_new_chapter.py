"""Adding a chapter touches only that chapter's folders.

A throwaway chapter 99 (tests/fixtures/ch99) is added to a copy of the course in exactly three
places: its package ``autograder/problems/ch99/`` (exercise, hints), its source
``source/ch99_negation/`` and its bank folder ``tests/bank/ch99_negation/``. Nothing else is
edited, and the course picks it up: the check cell finds the exercise, hints show, the build makes
its notebooks, the bank's table has its exercise, and the judge grades its bank entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "ch99"
CHAPTER = "ch99_negation"
PLACES = ("autograder/problems/ch99", f"source/{CHAPTER}", f"tests/bank/{CHAPTER}")

pytestmark = pytest.mark.slow


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _course_copy(root: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.ipynb")
    shutil.copytree(REPO / "autograder", root / "autograder", ignore=skip)
    shutil.copytree(REPO / "source", root / "source", ignore=skip)
    for name in ("bank", "nbgrader_helpers.py", "submissions.py"):
        src = REPO / "tests" / name
        if src.is_dir():
            shutil.copytree(src, root / "tests" / name, ignore=skip)
        elif src.exists():
            shutil.copy(src, root / "tests" / name)
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")


def _add_chapter(root: Path) -> None:
    package = root / "autograder" / "problems" / "ch99"
    package.mkdir()
    shutil.copy(FIXTURE / "problems_init.py", package / "__init__.py")
    shutil.copy(FIXTURE / "hints.toml", package / "hints.toml")
    (root / "source" / CHAPTER).mkdir()
    shutil.copy(FIXTURE / "source.py", root / "source" / CHAPTER / f"{CHAPTER}.py")
    bank = root / "tests" / "bank" / CHAPTER / "negate"
    bank.mkdir(parents=True)
    for name in ("ok_plain.py", "wrong_copies.py"):
        shutil.copy(FIXTURE / name, bank / name)


def test_a_new_chapter_needs_only_its_own_folders(tmp_path):
    root = tmp_path / "course"
    _course_copy(root)
    before = _files(root)
    _add_chapter(root)
    after = _files(root)
    touched = sorted(set(after) ^ set(before) | {k for k in before if after.get(k) != before[k]})
    assert touched and all(t.startswith(PLACES) for t in touched), touched

    script = textwrap.dedent(f"""
        import json, sys
        import autograder as ag
        import bank
        from autograder.grading import judge
        from autograder.tools import build
        out = {{}}
        out["path"] = ag.problems.ch99.negate.path
        out["in_all"] = "negate" in ag.problems.ALL
        out["hint"] = "negate" in ag.hints.ladders()
        out["table"] = bank.EXERCISES["negate"]
        settings = judge.Settings(secret="ch99-secret", exec_timeout=120)
        out["grades"] = {{}}
        for entry in bank.entries():
            if entry.exercise == "negate":
                judged = judge.judge_notebook(bank.notebook("negate", entry.code), settings)
                out["grades"][entry.name] = judged["negate_test"].passed
        out["build"] = build.main(["--root", {str(root)!r}, {CHAPTER!r}])
        print("RESULT " + json.dumps(out))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")]),
           "AAG_CHECK_TIMEOUT": "60"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    assert out["path"] == "ch99.negate" and out["in_all"] and out["hint"]
    assert out["table"] == dict(chapter=CHAPTER, module="ch99", problem="negate",
                                func="negate_kernel", test_id="negate_test",
                                solution_id="negate_solution", speed_id=None)
    assert out["grades"] == {"ok_plain": True, "wrong_copies": False}
    assert out["build"] == 0
    release = json.loads((root / "course" / CHAPTER / f"{CHAPTER}.ipynb").read_text())
    sources = ["".join(c["source"]) for c in release["cells"]]
    assert any("ag.problems.ch99.negate.check(negate_kernel)" in s for s in sources)
    assert not any("out[i] = -x[i]" in s for s in sources)     # the solution is stripped
    assert (root / "solutions" / CHAPTER / f"{CHAPTER}.ipynb").is_file()
