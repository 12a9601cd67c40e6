"""The instructor's pipeline on a real chapter: release -> submissions -> autograde -> feedback.

In a temporary copy of the course (so the repository's gradebook is untouched), nbgrader runs as
the instructor runs it, with the repository's nbgrader_config.py. The submissions are the chapter's
solution, the untouched release, and the solution broken in the ways learners break it (made by
replacing text in one cell); grades are read per test cell from the gradebook.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from html import unescape
from pathlib import Path

import pytest

import autograder as ag
import nbgrader_helpers as h
from autograder.grading import judge
from autograder.grading.judge import written_answer_id
from autograder.grading.nbgrader_ext.add_model_answers import is_model_answer
from autograder.grading.nbgrader_ext.scrub_grader_paths import grader_paths

pytestmark = pytest.mark.slow

CHAPTER = "ch02_data_parallel"
OTHERS = [c for c in h.real_chapters() if c != CHAPTER]
# A kernel that never returns stops a cell after this many seconds of processor time (nbgrader's
# Execute timeout, lowered from the course's 300 s so the test is quick), and a hung case inside a
# check after CHECK_LIMIT. Chapter 2's longest cell takes 1.7 s of it in CPU mode; a case, 1 s.
TIMEOUT, CHECK_LIMIT = 10, 6
# The other chapters' solutions only have to finish: each case gets the course's own limit
# (Problem.time_limit, 20 s and more in CPU mode; a 4,096-thread case of chapter 7 takes 3.3 s of
# processor time alone and three times that on a busy machine), each cell a minute.
OTHERS_TIMEOUT, OTHERS_CHECK_LIMIT = 60, None
if ag.backend.is_gpu:
    # On a GPU the measuring cells run for real: chapter 2's copy-cost cell alone times ten sizes
    # up to 2^28 floats, ten calls each, with 3 GiB of host<->device copies per call at the top.
    TIMEOUT, CHECK_LIMIT, OTHERS_TIMEOUT = 180, 15, 300
# Speed cells are named <exercise>_speed in every chapter.

# student -> (cell, text in the solution, replacement, the test cells it must break). One plain
# value bug stands for all (the bank judges the others: tests/bank/ch02_data_parallel/vector_add/
# wrong_*); the rest fail in ways only nbgrader's run shows: a cell that does not parse, a kernel
# that raises, a launch that never returns.
WRONG = {
    "off_by_one": ("vector_add_solution", "if i < out.size:", "if i <= out.size:", {"vector_add_test"}),
    "batch_syntax_error": ("grid_stride_solution", "for i in range(start, out.size, stride):",
                           "for i in range(start, out.size, stride)", {"grid_stride_test"}),
    "batch_kernel_raises": ("grid_stride_solution", "        out[i] = x[i] + y[i]",
                            "        out[i] = x[i] + y[i]\n        raise ValueError('this kernel raises')",
                            {"grid_stride_test"}),
    # Every launch spins forever: first in the cell where the learner tries the kernel by hand (not
    # a test cell: only nbgrader's timeout can stop it), then inside the check (its own limit).
    "endless_loop": ("vector_add_solution", "    if i < out.size:",
                     "    while out.size > 0:\n        pass\n    if i < out.size:", {"vector_add_test"}),
}

TIMED = ("off_by_one", "endless_loop")


def _grading_env(check_limit=CHECK_LIMIT):
    """nbgrader's environment; ``check_limit`` None: the course's own limit per case."""
    environ = h.env(AAG_SPEED_WITHOUT_GPU="zero")
    environ.pop("AAG_CHECK_TIMEOUT", None)
    if check_limit is not None:
        environ["AAG_CHECK_TIMEOUT"] = str(check_limit)
    return environ


def _autograde(root, chapter, *args, timeout=TIMEOUT, check_limit=CHECK_LIMIT):
    # The judge gives the cells before an exercise as long as nbgrader gives one cell.
    h.nbgrader(root, "autograde", chapter, *args, "--force", f"--Execute.timeout={timeout}",
               f"--JudgeSubmission.exec_timeout={timeout}", environ=_grading_env(check_limit))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    if CHAPTER not in h.real_chapters():
        pytest.skip(f"{CHAPTER} is not in source/ yet")

    def make(directory):
        h.make_course(directory, [CHAPTER])
        h.prepare(directory, CHAPTER)
        return str(directory)

    root = Path(h.once(tmp_path_factory, "roundtrip-course", make))
    release = h.read_nb(root / "course" / CHAPTER / f"{CHAPTER}.ipynb")
    solution = h.read_nb(root / "solutions" / CHAPTER / f"{CHAPTER}.ipynb")
    return root, release, solution


@pytest.fixture(scope="module")
def graded(tmp_path_factory, course):
    """The solution, the blank release and a solution without a test cell, in one autograde run."""
    root, release, solution = course

    def make(_):
        h.submit(root, CHAPTER, "sol", solution)
        h.submit(root, CHAPTER, "blank", release)
        deleted = h.mutate(solution, "vector_add_solution", "", "")  # a copy
        deleted.cells = [c for c in deleted.cells if c.get("id") != "grid_stride_test"]
        h.submit(root, CHAPTER, "deleter", deleted)
        _autograde(root, CHAPTER)

    h.once(tmp_path_factory, "roundtrip-graded", make)
    return root


@pytest.fixture(scope="module")
def graded_wrong(tmp_path_factory, course, graded):
    """All the broken submissions, autograded: student -> seconds. The two whose times are
    compared (the hang and the same wrong answer without it) one at a time, the others
    (``batch_*``) in one run."""
    root, _, solution = course

    def make(_):
        for student, (cell, old, new, _) in WRONG.items():
            h.submit(root, CHAPTER, student, h.mutate(solution, cell, old, new))
        elapsed = {}
        for student in TIMED:
            start = time.monotonic()
            _autograde(root, CHAPTER, "--student", student)
            elapsed[student] = time.monotonic() - start
        assert sorted(set(WRONG) - set(TIMED)) == sorted(s for s in WRONG if s.startswith("batch_"))
        _autograde(root, CHAPTER, "--student", "batch_*")      # nbgrader takes a glob
        return elapsed

    return root, h.once(tmp_path_factory, "roundtrip-wrong", make)


def test_solution_scores_full_marks_on_every_correctness_cell(course, graded):
    """Does the chapter's own solution get full marks on every correctness test cell?"""
    root, release, _ = course
    scores = h.grades(root, CHAPTER, "sol")
    expected = h.grade_cells(release)
    assert set(scores) == set(expected)
    for cell, (score, max_score) in scores.items():
        assert max_score == expected[cell]
        _assert_full_marks(cell, score, max_score)
    _assert_ran_without_errors(root, CHAPTER)


def _assert_ran_without_errors(root, chapter):
    """The cells nobody grades (the measuring cells' CPU-mode branch, the pictures, the
    experiments) ran without an error in the autograded solution: nbgrader carries on silently
    past them. Graded cells answer through their scores (a speed cell fails without a GPU)."""
    nb = h.read_nb(Path(root) / "autograded" / "sol" / chapter / f"{chapter}.ipynb")
    errors = [f"cell {i} ({c.source.splitlines()[0][:60] if c.source else ''}): "
              f"{o.get('ename')}: {o.get('evalue', '')[:300]}"
              for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("grade")
              for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{chapter}'s solution raised at autograde:\n" + "\n".join(errors)


def _assert_full_marks(cell, score, max_score):
    if cell.endswith("_speed") and not ag.backend.is_gpu:
        # Graded without a GPU and AAG_SPEED_WITHOUT_GPU=zero: a speed cell is worth nothing.
        assert score == 0, cell
    else:
        # On a GPU this includes the speed cells: the reference solution must clear its own bar.
        assert score == max_score, f"{cell}: {score}/{max_score}"


@pytest.fixture(scope="session")
def all_chapters(tmp_path_factory):
    """One course with every other chapter, released and solved once (nbgrader globs the ids)."""
    def make(directory):
        h.make_course(directory, OTHERS)
        for chapter in OTHERS:
            h.aag_build.convert_chapter(directory, chapter)
        h.nbgrader(directory, "generate_assignment", "ch*", "--force")
        h.nbgrader(directory, "generate_solution", "ch*", "--force")
        return str(directory)

    return Path(h.once(tmp_path_factory, "roundtrip-all-chapters", make))


def _has_written_answers(nb) -> bool:
    return any(c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade")
               for c in nb.cells)


# The one other chapter whose untouched release also goes through nbgrader (its written answers
# must score 0 at once); every other release is judged directly, as JudgeSubmission judges it.
BLANK_THROUGH_NBGRADER = "ch05_memory_locality"


@pytest.mark.parametrize("chapter", OTHERS)
def test_every_other_chapter_solution_scores_full_marks(tmp_path, monkeypatch, all_chapters, chapter):
    """Does every other chapter's solution get full marks at autograde (and its release zero)?"""
    root = tmp_path / "course"               # a copy: each test writes its own gradebook
    shutil.copytree(all_chapters, root, ignore=shutil.ignore_patterns("submitted", "autograded"))
    solution = h.read_nb(root / "solutions" / chapter / f"{chapter}.ipynb")
    release = h.read_nb(root / "course" / chapter / f"{chapter}.ipynb")
    h.submit(root, chapter, "sol", solution)
    blank_in_nbgrader = chapter == BLANK_THROUGH_NBGRADER
    if blank_in_nbgrader:
        assert _has_written_answers(release), f"{chapter} has no written answer to leave blank"
        h.submit(root, chapter, "blank", release)
    # The per-cell limits derived from the solution's own run are proven on chapter 2 (above) and
    # in the README walk-through (tests/test_instructor.py); measuring them here would run every
    # chapter's solution notebook once more, as long again as the autograde itself.
    _autograde(root, chapter, "--ExecuteGuarded.derive_limits=False", timeout=OTHERS_TIMEOUT,
               check_limit=OTHERS_CHECK_LIMIT)
    scores = h.grades(root, chapter, "sol")
    assert set(scores) == set(h.grade_cells(release))
    for cell, (score, max_score) in scores.items():
        _assert_full_marks(cell, score, max_score)
    _assert_ran_without_errors(root, chapter)
    # Written answers wait for the instructor, who sees the model answer under each in formgrader.
    written = h.manual_grades(root, chapter, "sol")
    assert all(needs for _, needs in written.values()), written
    graded = h.read_nb(root / "autograded" / "sol" / chapter / f"{chapter}.ipynb").cells
    under = {written_answer_id(cell) for cell, after in zip(graded, graded[1:])
             if is_model_answer(after)}
    assert under - {None} == set(written), (set(written), under)
    if blank_in_nbgrader:
        blank = h.grades(root, chapter, "blank")
        assert blank and all(score == 0 for score, _ in blank.values()), blank
        # An untouched answer cell scores 0 at once.
        assert all(score == 0 for score, _ in h.manual_grades(root, chapter, "blank").values())
    else:
        _assert_release_fails_every_exercise(root, chapter, release, monkeypatch)


def _assert_release_fails_every_exercise(root, chapter, release, monkeypatch):
    """The untouched release, judged as JudgeSubmission judges it in nbgrader autograde (same
    settings and limits), fails every graded cell: none of its stubs passes a check by accident."""
    code_cells = set(h.grade_cells(release))
    judged = {grade_id for _, grade_id, _ in judge.grade_cells(release)}
    assert judged == code_cells, f"graded cells the judge does not make: {code_cells - judged}"
    monkeypatch.delenv("AAG_CHECK_TIMEOUT", raising=False)      # the course's own limits
    folder = root / "autograded" / "blank" / chapter
    folder.mkdir(parents=True)
    settings = judge.Settings(secret=secrets.token_hex(16), sandbox=h.sandbox_mode(),
                              protected=(root.resolve(),), exec_timeout=OTHERS_TIMEOUT,
                              speed_without_gpu="zero")
    results = judge.judge_notebook(release, settings, files_from=folder)
    passed = [grade_id for grade_id, r in results.items() if r.passed]
    assert not passed, f"{chapter}'s release passes {passed}"


def test_untouched_release_scores_zero_everywhere(graded):
    """Does the blank release score zero on every test cell?"""
    root = graded
    scores = h.grades(root, CHAPTER, "blank")
    assert scores and all(score == 0 for score, _ in scores.values()), scores


def test_deleted_test_cell_is_restored_and_graded(course, graded):
    """Is a test cell the learner deleted put back at autograde and run?"""
    root, _, _ = course
    scores = h.grades(root, CHAPTER, "deleter")
    assert scores["grid_stride_test"] == (3, 3)
    autograded = h.read_nb(root / "autograded" / "deleter" / CHAPTER / f"{CHAPTER}.ipynb")
    h.cell_by_id(autograded, "grid_stride_test")  # present again


@pytest.mark.parametrize("student", sorted(WRONG))
def test_wrong_submission_loses_exactly_the_broken_exercise(course, graded_wrong, student):
    """Does each broken submission lose exactly the points of the exercise it breaks, keep the rest?"""
    root, _ = graded_wrong
    reference = h.grades(root, CHAPTER, "sol")
    scores = h.grades(root, CHAPTER, student)
    broken = WRONG[student][3]
    for cell, (score, max_score) in scores.items():
        if cell in broken:
            assert score == 0, f"{student}: {cell} should score 0, got {score}"
        else:
            assert score == reference[cell][0], f"{student}: {cell} got {score}, solution {reference[cell]}"


def test_endless_loop_costs_about_one_timeout_with_a_clear_message(course, graded_wrong):
    """Does an endless loop cost about one timeout, and does the cell say why it was stopped?"""
    root, elapsed = graded_wrong
    # The hang costs what the same wrong answer without it costs (off_by_one breaks the same cell),
    # plus one cell timeout and the check's limit for at most two cases; the 1.5 is for a busy
    # machine, where the spinning kernel gets part of a core (the timeout counts processor time).
    # Without the guard, each of the eight later code cells would wait out its own timeout.
    hang = elapsed["endless_loop"] - elapsed["off_by_one"]
    assert hang < 1.5 * (TIMEOUT + 2 * CHECK_LIMIT) + 0.5 * elapsed["off_by_one"] + 10, elapsed
    nb = h.read_nb(root / "autograded" / "endless_loop" / CHAPTER / f"{CHAPTER}.ipynb")
    messages = [o.get("evalue", "") for c in nb.cells if c.cell_type == "code"
                for o in c.outputs if o.output_type == "error"]
    assert any(f"ran past {TIMEOUT} s and was stopped: an endless loop?" in m for m in messages), messages


def test_feedback_shows_no_hidden_test_code(course, graded, graded_wrong):
    """Does the feedback HTML of passing and failing submissions hide the hidden tests' code?"""
    root, _, _ = course
    h.nbgrader(root, "generate_feedback", CHAPTER, "--force", environ=_grading_env())
    for student in ("sol", "blank", "off_by_one", "batch_kernel_raises"):
        # The autograded notebook feedback is made from holds the hidden tests (and, when a check
        # failed, a traceback quoting them) ...
        graded_nb = (root / "autograded" / student / CHAPTER / f"{CHAPTER}.ipynb").read_text()
        assert "check_hidden" in graded_nb, student
        # ... the learner's HTML must not: compare its text, as a browser shows it.
        html = (root / "feedback" / student / CHAPTER / f"{CHAPTER}.html").read_text()
        shown = unescape(re.sub(r"<[^>]+>", "", html))
        assert "check_hidden" not in shown, student
        assert "BEGIN HIDDEN TESTS" not in shown, student
        assert "# (hidden tests ran here; their code is not shown)" in shown, student
        # nor the grading machine's folders (its Python, the course folder) in tracebacks
        for folder, _ in grader_paths(str(root)):
            assert folder == os.path.expanduser("~") or folder not in shown, (student, folder)
        assert "ag.problems.ch02.vector_add.check(add_vectors)" in shown, student
