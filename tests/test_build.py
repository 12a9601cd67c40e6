"""`aag build`: text sources -> course/ and solutions/, deterministic, with nothing secret leaking.

The chapters are the course's own (source/chNN_*/chNN_*.py) plus a pure-Python fixture chapter,
so the pipeline is tested even where a chapter is being rewritten.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nbgrader_helpers as h
from autograder import build as aag_build

CHAPTERS = h.all_chapters()
OUTPUTS = ("course", "solutions")


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every generated file (outputs and intermediate notebooks), by path relative to root."""
    files = {}
    for top in (*OUTPUTS, "source"):
        for p in sorted((root / top).rglob("*")):
            if p.is_file() and (top != "source" or p.suffix == ".ipynb"):
                files[p.relative_to(root).as_posix()] = p.read_bytes()
    return files


def _regions(source: str, begin: str, end: str) -> list[str]:
    """The non-blank lines inside BEGIN/END regions of a text source."""
    lines, inside = [], False
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One course, built once, shared by the structural tests below."""
    root = h.make_course(tmp_path_factory.mktemp("built"), CHAPTERS)
    aag_build.build(root)
    return root


# --- determinism ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_build_is_byte_identical_across_runs_and_places(built, tmp_path, repo_root):
    """Does building twice, in place and in another directory, give the same bytes?

    The other directory's build of the course's chapters is the committed course/ and
    solutions/ (built in the repository, over its previous outputs, on another machine; the
    staleness check keeps them current), so only the fixture chapter is built a third time,
    elsewhere; and only three chapters are built again here, over their own outputs (the
    staleness check proves that for every chapter)."""
    first = _snapshot(built)
    assert any(k.startswith("course/") for k in first)
    real = [c for c in CHAPTERS if c != h.FIXTURE_CHAPTER]
    again = [h.FIXTURE_CHAPTER, real[0], real[-1]]
    aag_build.build(built, again)               # again, over their own previous output
    assert _snapshot(built) == first
    other = h.make_course(tmp_path / "elsewhere" / "deeper", [h.FIXTURE_CHAPTER])
    aag_build.build(other)                      # another path: no absolute paths may leak in
    second = _snapshot(other)
    for chapter in h.real_chapters():
        for top in OUTPUTS:
            for path in (Path(repo_root) / top / chapter).rglob("*"):
                if path.is_file():
                    second[path.relative_to(repo_root).as_posix()] = path.read_bytes()
    outputs = {k for k in first if not k.startswith("source/")}   # not committed
    assert {k for k in second if not k.startswith("source/")} == outputs
    changed = [k for k in first if k in second and first[k] != second[k]]
    assert not changed, f"differ between two builds: {changed}"


@pytest.mark.slow
def test_build_leaves_no_gradebook_behind(built):
    """Is building side-effect free (a throw-away gradebook, no nbgrader state in the course)?"""
    for name in ("gradebook.db", "submitted", "autograded", "feedback", "release"):
        assert not (built / name).exists(), name


# --- what reaches learners ------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_text_sources_never_reach_course_or_solutions(built, chapter):
    """Are the .py sources (solutions and hidden tests in clear) kept out of course/ and solutions/?"""
    for top in OUTPUTS:
        files = sorted(p.name for p in (built / top / chapter).rglob("*") if p.is_file())
        assert f"{chapter}.ipynb" in files
        assert not any(f.endswith((".py", ".pyc")) for f in files), files


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_cell_ids_are_stable_unique_and_named_by_grade_id(built, chapter):
    """Does every cell have a valid unique id, the grade_id where there is one, the same in every output?"""
    ids = {}
    for top in ("source", *OUTPUTS):
        nb = h.read_nb(built / top / chapter / f"{chapter}.ipynb")
        assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
        these = [c.id for c in nb.cells]
        assert len(these) == len(set(these)), f"{top}: duplicate ids"
        assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) for i in these), these
        for index, cell in enumerate(nb.cells):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            assert cell.id == (grade_id or f"cell-{index}")
        ids[top] = these
    assert ids["course"] == ids["source"] == ids["solutions"]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_notebook_metadata_is_fixed(built, chapter):
    """Is the kernelspec fixed and is no jupytext metadata left in any notebook?"""
    for top in ("source", *OUTPUTS):
        raw = (built / top / chapter / f"{chapter}.ipynb").read_text()
        assert "jupytext" not in raw and "lines_to_next_cell" not in raw, top
        nb = json.loads(raw)
        assert nb["metadata"]["kernelspec"]["name"] == "python3"
        assert set(nb["metadata"]) == {"kernelspec", "language_info"}


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_solutions_are_in_solutions_and_not_in_course(built, chapter):
    """Is each solution's code removed from course/ and present in solutions/ (with no outputs)?"""
    text = h.chapter_source_dir(chapter).joinpath(f"{chapter}.py").read_text()
    solution_lines = _regions(text, "### BEGIN SOLUTION", "### END SOLUTION")
    assert solution_lines, "the chapter has no solution region"
    course = h.read_nb(built / "course" / chapter / f"{chapter}.ipynb")
    solutions = h.read_nb(built / "solutions" / chapter / f"{chapter}.ipynb")
    # Only the answer cells: the prose and other cells may legitimately quote a line of a solution.
    answers = "\n".join(c.source for c in course.cells
                        if c.metadata.get("nbgrader", {}).get("solution"))
    solutions_text = "\n".join(c.source for c in solutions.cells)
    assert "BEGIN SOLUTION" not in "\n".join(c.source for c in course.cells)
    assert "YOUR CODE HERE" in answers
    for line in solution_lines:
        assert line not in answers, f"solution line in course/: {line}"
        assert line in solutions_text, f"solution line missing from solutions/: {line}"
    for cell in solutions.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.id


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_hidden_tests_are_in_neither_course_nor_solutions(built, chapter):
    """Are hidden test regions absent from both course/ and solutions/ (while visible tests stay)?"""
    text = h.chapter_source_dir(chapter).joinpath(f"{chapter}.py").read_text()
    hidden = _regions(text, "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
    assert hidden, "the chapter has no hidden tests"
    for top in OUTPUTS:
        nb = h.read_nb(built / top / chapter / f"{chapter}.ipynb")
        code = "\n".join(c.source for c in nb.cells)
        assert "HIDDEN TESTS" not in code, top
        for line in hidden:
            assert line not in code, f"hidden test line in {top}/: {line}"
        # The visible part of each test cell is still there.
        assert h.grade_cells(nb), top


# --- the text -> notebook step alone --------------------------------------------------------------

SOURCE = """\
# %% [markdown]
# Title

# %% nbgrader={"grade": false, "grade_id": "ex", "locked": false, "schema_version": 3, "solution": true, "task": false}
x = 1


# %% tags=["keep"]
y = 2
"""


def test_conversion_drops_jupytext_metadata_and_keeps_nbgrader():
    """Does the text -> notebook step keep nbgrader metadata and tags, and nothing of jupytext?"""
    nb = aag_build.source_to_notebook(SOURCE)
    assert [c.id for c in nb.cells] == ["cell-0", "ex", "cell-2"]
    assert nb.cells[1].metadata["nbgrader"]["grade_id"] == "ex"
    assert nb.cells[2].metadata == {"tags": ["keep"]}
    assert nb.metadata == {"kernelspec": aag_build._KERNELSPEC, "language_info": aag_build._LANGUAGE_INFO}


def test_conversion_rejects_duplicate_and_invalid_ids():
    """Are a grade_id used twice and a grade_id that is no valid cell id refused, with the reason?"""
    header = SOURCE.splitlines()[3]             # the "ex" cell's header
    twice = SOURCE.replace('# %% tags=["keep"]', header)
    with pytest.raises(aag_build.BuildError, match="used twice"):
        aag_build.source_to_notebook(twice)
    with pytest.raises(aag_build.BuildError, match="not a valid cell id"):
        aag_build.source_to_notebook(SOURCE.replace('"grade_id": "ex"', '"grade_id": "ex 1"'))


# --- --check --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_check_reports_a_stale_file_and_a_missing_one(built, tmp_path):
    """Does `build --check` fail, naming the files, when an output was edited or deleted?"""
    chapter = CHAPTERS[0]       # one chapter is enough to see the check at work, and 12x cheaper
    root = h.make_course(tmp_path / "course", [chapter])
    for top in OUTPUTS:
        shutil.copytree(built / top / chapter, root / top / chapter)
    edited = root / "course" / chapter / f"{chapter}.ipynb"
    edited.write_text(edited.read_text().replace("YOUR CODE HERE", "YOUR CODE THERE", 1))
    (root / "solutions" / chapter / f"{chapter}.ipynb").unlink()
    assert aag_build.build(root, check=True) == [
        f"course/{chapter}/{chapter}.ipynb", f"solutions/{chapter}/{chapter}.ipynb"]
    p = subprocess.run([sys.executable, "-m", "autograder.tools.build", "--check", "--root", str(root)],
                       capture_output=True, text=True, env=h.env())
    assert p.returncode == 1
    assert "stale? run `aag build`" in p.stderr and f"course/{chapter}/{chapter}.ipynb" in p.stderr


@pytest.mark.slow
def test_committed_course_and_solutions_are_up_to_date(repo_root):
    """Do the committed course/ and solutions/ match what source/ builds (CI's staleness check)?"""
    if not h.real_chapters():
        pytest.skip("no chapter in source/ yet")
    if os.environ.get("AAG_STALENESS_CHECKED") == "1":
        pytest.skip("./aag test runs this check beside pytest and reports it at the end")
    p = subprocess.run([sys.executable, "-m", "autograder.tools.build", "--check", "--root", repo_root],
                       capture_output=True, text=True, env=h.env())
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c >= "ch03"])
def test_every_chapter_from_3_asks_for_a_written_answer_graded_by_hand(built, chapter):
    """Each "predict, then measure" ends in an explanation the instructor grades in formgrader:
    a markdown grade cell with points, empty in the release, a model answer in the solutions."""
    release = h.read_nb(built / "course" / chapter / f"{chapter}.ipynb")
    solution = h.read_nb(built / "solutions" / chapter / f"{chapter}.ipynb")
    answers = [c for c in release.cells if c.cell_type == "markdown"
               and c.metadata.get("nbgrader", {}).get("grade")]
    assert answers, f"{chapter} has no manually graded answer"
    for cell in answers:
        meta = cell.metadata["nbgrader"]
        assert meta["solution"] and meta["points"] > 0 and cell.source == "YOUR ANSWER HERE"
        model = h.cell_by_id(solution, meta["grade_id"]).source
        assert len(model) > 200 and "BEGIN SOLUTION" not in model
