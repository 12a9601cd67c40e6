"""The judge on its own (no nbgrader): what it runs, what it sends, how it contains faults.

Learner code is given as notebook cells, as the judge receives it; a notebook's exercises run in
one student process (sandboxed where bubblewrap works) that is started afresh when one of them
kills it, so these tests also show that one broken exercise costs nothing to the next.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import autograder as ag
from autograder.grading import judge
from autograder.tools import grade
from autograder.judge import CheckCall

REPO = Path(__file__).resolve().parents[1]
SETUP = "import numpy as np\nfrom numba import cuda\nimport autograder as ag\n"
GOOD_ADD = '''
@cuda.jit
def add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]

def add_vectors(x, y, out):
    add_kernel[(out.size + 127) // 128, 128](x, y, out)
'''
VECTOR_ADD = [CheckCall("ch02.vector_add", "check", "add_vectors"),
              CheckCall("ch02.vector_add", "check_hidden", "add_vectors")]


def settings(**kw):
    kw.setdefault("secret", "test-secret-0123456789")
    kw.setdefault("exec_timeout", 120)
    return judge.Settings(**kw)


def run(code: str, checks=VECTOR_ADD, **kw):
    cells = [{"id": "setup", "source": SETUP}, {"id": "solution", "source": code}]
    return judge.judge_exercise(cells, checks, settings(**kw), "test")


# ---- what the judge reads from a grade cell --------------------------------------------------------

def test_parse_checks_finds_course_checks_only():
    source = ("ag.problems.ch02.vector_add.check(add_vectors)\n"
              "### BEGIN HIDDEN TESTS\nag.problems.ch02.vector_add.check_hidden(add_vectors)\n"
              "### END HIDDEN TESTS\nassert add_vectors is not None\nprint(len([1]))\n"
              "autograder.problems.ch01.saxpy.check_speed(saxpy)\nsomething.check(other)\n")
    calls = judge.parse_checks(source)
    assert [(c.problem, c.kind, c.func) for c in calls] == [
        ("ch02.vector_add", "check", "add_vectors"), ("ch02.vector_add", "check_hidden", "add_vectors"),
        ("ch01.saxpy", "check_speed", "saxpy")]
    assert judge.parse_checks("def broken(:\n") == []


def test_self_study_adds_the_hidden_check_the_release_lacks():
    calls = grade.with_hidden([CheckCall("ch02.vector_add", "check", "f")])
    assert [c.kind for c in calls] == ["check", "check_hidden"]


def test_cells_before_skip_tests_isolated_and_hung_cells():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1"),
                nbformat.v4.new_code_cell("%%isolated\nprint(1)"),
                nbformat.v4.new_code_cell("while True: pass"),
                nbformat.v4.new_code_cell("ag.problems.ch02.vector_add.check(f)"),
                nbformat.v4.new_markdown_cell("text"),
                nbformat.v4.new_code_cell("b = 2"),
                nbformat.v4.new_code_cell("ag.problems.ch02.vector_add.check(f)")]
    nb.cells[2].outputs = [nbformat.v4.new_output("error", ename="CellTimeoutError", evalue="",
                                                  traceback=[])]
    nb.cells[3].metadata["nbgrader"] = {"grade": True, "grade_id": "t1", "points": 1}
    nb.cells[6].metadata["nbgrader"] = {"grade": True, "grade_id": "t2", "points": 1}
    assert [c["source"] for c in judge.cells_before(nb, 6)] == ["a = 1", "b = 2"]
    assert [g for _, g, _ in judge.grade_cells(nb)] == ["t1", "t2"]


# ---- verdicts ---------------------------------------------------------------------------------------

def test_a_correct_submission_passes_and_its_own_kernel_is_seen():
    result = run(GOOD_ADD)
    assert result.passed, result.error
    assert all(n >= 1 for n in result.details["launches"]["check_hidden"])
    assert not result.flags


def test_hidden_failures_show_the_size_and_element_but_not_the_inputs_or_the_seed():
    wrong = GOOD_ADD.replace("out[i] = x[i] + y[i]", "out[i] = x[i] + y[i] + (i == 40) * 1.0")
    visible = run(wrong, checks=VECTOR_ADD[:1])
    assert not visible.passed and "inputs there" in visible.error
    hidden = run(wrong, checks=VECTOR_ADD[1:])
    assert not hidden.passed and "hidden tests" in hidden.error
    assert "`out`[40]" in hidden.error and "expected" in hidden.error
    assert "inputs there" not in hidden.error and "test-secret" not in hidden.error


def test_the_secret_never_reaches_the_student_process(monkeypatch):
    monkeypatch.setenv("AAG_SECRET_SEED", "test-secret-0123456789")
    probe = GOOD_ADD + '''
import os
leaks = [k for k, v in os.environ.items() if "test-secret" in v or "SECRET" in k]
assert not leaks, leaks
'''
    result = run(probe)
    assert result.passed, result.error
    assert result.details["cell_errors"] == []


def test_hidden_inputs_change_with_the_secret():
    from autograder.problems import ch02
    a = judge._cases(ch02.vector_add, VECTOR_ADD[1], settings(secret="one"))
    b = judge._cases(ch02.vector_add, VECTOR_ADD[1], settings(secret="two"))
    assert [c.size for c in a] != [c.size for c in b] or any(
        (ca.inputs["x"] != cb.inputs["x"]).any() for ca, cb in zip(a, b))


@pytest.mark.parametrize("name, body, words", [
    ("exit", "import os; os._exit(0)", "ended (exit status 0)"),
    ("crash", "import ctypes; ctypes.string_at(0)", "crashed (signal"),
    ("hang", "while True: pass", "time limit"),
    ("huge allocation", "import numpy; numpy.ones(2**29)", "memory"),   # 4 GiB, limit 3
    ("raises", "raise RuntimeError('boom')", "boom"),
])
def test_a_fault_fails_that_exercise_in_plain_words(monkeypatch, name, body, words):
    # 5 s stops the hang quickly; the allocation gets longer, so that on a busy machine the
    # memory limit, not the time limit, is what stops it (filling 4 GiB took over 5 s of
    # processor time there, page faults included).
    monkeypatch.setenv("AAG_CHECK_TIMEOUT", "60" if name == "huge allocation" else "5")
    code = GOOD_ADD.replace("def add_vectors(x, y, out):\n",
                            f"def add_vectors(x, y, out):\n    {body}\n")
    result = run(code, memory_bytes=3 << 30)
    assert not result.passed
    assert words in result.error.lower(), result.error
    if name == "hang":      # one story: stopped at its limit, not "the process died"
        assert "never finished" in result.error and "died" not in result.error, result.error
    # the next exercise, in a fresh process, is judged normally
    assert run(GOOD_ADD).passed


@pytest.mark.gpu
def test_an_illegal_memory_access_fails_that_exercise_only():
    """On a GPU a wild write poisons the CUDA context: the judge says so, and the next exercise
    (a fresh process, a fresh context) is judged normally."""
    wild = GOOD_ADD.replace("out[i] = x[i] + y[i]", "out[i + (1 << 34)] = x[i] + y[i]")
    result = run(wild)
    assert not result.passed
    assert "ILLEGAL_ADDRESS" in result.error.upper() or "outside an array" in result.error, result.error
    assert run(GOOD_ADD).passed


def _notebook(*cells):
    """A notebook of (source, grade_id or None) cells: a grade_id makes it a graded cell."""
    nb = nbformat.v4.new_notebook()
    for source, grade_id in cells:
        cell = nbformat.v4.new_code_cell(source)
        if grade_id:
            cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 1}
        nb.cells.append(cell)
    return nb


CHECK_ADD = "ag.problems.ch02.vector_add.check(add_vectors)\nag.problems.ch02.vector_add.check_hidden(add_vectors)"
CHECK_SAXPY = "ag.problems.ch01.saxpy.check(saxpy)"
GOOD_SAXPY = '''
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
'''


def test_a_notebook_is_judged_in_one_student_process(monkeypatch):
    """The second exercise runs on in the first one's process: the cells between the two grade
    cells run once more there (a counter in the notebook says so), nothing before them again."""
    started = []
    real = judge.StudentProcess.__init__
    monkeypatch.setattr(judge.StudentProcess, "__init__",
                        lambda self, *a, **k: (started.append(1), real(self, *a, **k))[1])
    nb = _notebook((SETUP + "runs = globals().get(\"runs\", 0)", None), (GOOD_ADD + "\nruns += 1", None),
                   (CHECK_ADD, "add"), ("runs += 10\n" + GOOD_SAXPY, None),
                   ("assert runs == 11, runs\n" + CHECK_SAXPY, "saxpy"))
    nb.cells[-1].source = CHECK_SAXPY
    nb.cells.insert(4, nbformat.v4.new_code_cell("assert runs == 11, runs"))
    results = judge.judge_notebook(nb, settings())
    assert [r.passed for r in results.values()] == [True, True], results
    assert len(started) == 1
    assert results["saxpy"].details["cells_run"] == 2          # the two cells after "add"
    assert results["saxpy"].details["cell_errors"] == []       # runs was 11: nothing ran twice


CACHING_ADD = GOOD_ADD + '''
ANSWERS = {}          # what this exercise's kernel computed, kept for the next exercise
computed_by = add_vectors

def add_vectors(x, y, out):
    computed_by(x, y, out)
    ANSWERS[out.size] = out
'''
REPLAYING_GRID_STRIDE = '''
@cuda.jit
def vector_add_grid_stride(x, y, out):
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, stride):
        seen = ANSWERS.get(out.size)
        # reads its inputs and stores every element, but the value is the one cached earlier
        out[i] = seen[i] + 0 * (x[i] + y[i]) if seen is not None else 0
'''


@pytest.mark.skipif(ag.backend.is_gpu, reason="the cheat reads a Python dict inside a kernel: CPU mode only")
def test_an_answer_cached_in_one_exercise_earns_nothing_in_the_next(monkeypatch):
    """The student process lives on from one exercise to the next, so a learner's globals do too:
    a kernel that replays the answers the previous exercise's kernel computed must still fail.
    Here the two exercises compute the same thing on the same sizes, so only the inputs differ:
    every exercise draws its cases from its own seed (with one seed for both, the visible check
    below passes). Cases run without CPU mode's fork, as on a GPU: the fork would drop the cache."""
    monkeypatch.setenv("AAG_NO_FORK", "1")
    monkeypatch.setattr(ag.problems.ch02.vector_add_grid_stride, "cpu_sizes",
                        ag.problems.ch02.vector_add.cpu_sizes)
    check_stride = ("ag.problems.ch02.vector_add_grid_stride.check(vector_add_grid_stride)\n"
                    "ag.problems.ch02.vector_add_grid_stride.check_hidden(vector_add_grid_stride)")
    nb = _notebook((SETUP, None), (CACHING_ADD, None), (CHECK_ADD, "add"),
                   (REPLAYING_GRID_STRIDE, None), (check_stride, "grid_stride"))
    results = judge.judge_notebook(nb, settings())
    assert results["add"].passed, results["add"].error
    replayed = results["grid_stride"]
    assert not replayed.passed and not replayed.lines, replayed.lines   # the visible check failed
    assert "elements are wrong" in replayed.error, replayed.error


def test_an_exercise_that_kills_the_process_costs_the_next_one_nothing():
    """A kernel that ends the process fails its own exercise; the next starts a fresh process
    and runs every cell above it again."""
    dies = GOOD_ADD.replace("add_kernel[", "import os; os._exit(3)\n    add_kernel[")
    nb = _notebook((SETUP, None), (dies, None), (CHECK_ADD, "add"), (GOOD_SAXPY, None),
                   (CHECK_SAXPY, "saxpy"))
    session = judge.Session()
    try:
        add = judge.judge_exercise(judge.cells_before(nb, 2), judge.parse_checks(CHECK_ADD),
                                   settings(), "add", session=session)
        saxpy = judge.judge_exercise(judge.cells_before(nb, 4), judge.parse_checks(CHECK_SAXPY),
                                     settings(), "saxpy", session=session)
    finally:
        session.close()
    assert not add.passed and "exit status 3" in add.error, add.error
    assert saxpy.passed, saxpy.error
    assert session.started == 2 and saxpy.details["cells_run"] == 3


def test_a_cell_that_hangs_before_the_exercise_costs_one_time_limit():
    result = run(GOOD_ADD + "\nwhile True:\n    pass\n", exec_timeout=5)
    assert not result.passed and "time limit" in result.error


# ---- self-study --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_aag_grade_gives_the_solution_full_marks_and_the_release_none(tmp_path):
    chapter = "ch01_introduction"
    for tree, expect in (("solutions", True), ("course", False)):
        nb = REPO / tree / chapter / f"{chapter}.ipynb"
        p = subprocess.run([sys.executable, "-m", "autograder", "grade", str(nb), "--json"],
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert p.returncode == 0, p.stderr[-3000:]
        results = json.loads(p.stdout[p.stdout.index("{"):])
        assert results and all(r["passed"] is expect for r in results.values()), results


def test_aag_grade_says_what_its_score_leaves_out(tmp_path):
    """A self-grade's total is the auto-graded points; the line under it names the written
    answers (their points, how many are unanswered) and, without a GPU, the speed points."""
    nb = REPO / "course" / "ch03_multidimensional" / "ch03_multidimensional.ipynb"
    p = subprocess.run([sys.executable, "-m", "autograder", "grade", str(nb)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    score = next(line for line in p.stdout.splitlines() if line.startswith("Score:"))
    assert score.startswith("Score: 0 / ") and "auto-graded points" in score
    assert "2 points await 1 written answer, graded by hand (1 not answered yet)" in score
    import autograder as ag
    assert ("2 speed points need a GPU" in score) is (not ag.backend.is_gpu), score


def test_a_file_in_the_submission_folder_cannot_replace_the_harness(tmp_path):
    """A learner's numpy.py or autograder.py beside the notebook is not imported by the harness."""
    (tmp_path / "autograder.py").write_text("raise SystemExit('the harness imported my file')\n")
    (tmp_path / "helper.py").write_text("VALUE = 42\n")
    cells = [{"id": "setup", "source": SETUP},
             {"id": "solution", "source": "import helper\nassert helper.VALUE == 42\n" + GOOD_ADD}]
    result = judge.judge_exercise(cells, VECTOR_ADD, settings(), "test", files_from=tmp_path)
    assert result.passed, result.error
    assert result.details["cell_errors"] == []


def test_a_speed_sample_is_checked_against_the_spec_and_the_guard_zone():
    """The check behind every timed call (run on a GPU), on host data: right values pass, one
    wrong element or a write past the end fails."""
    import numpy as np
    from autograder.problems import ch02
    problem, rng, n = ch02.vector_add_grid_stride, np.random.default_rng(0), 1000
    inputs = problem.speed_inputs(rng, n)
    idx = judge._sample_indices(rng, n)
    body = idx[idx < n]
    right = np.concatenate([(inputs["x"] + inputs["y"])[body], np.full(64, np.nan, np.float32)])
    assert judge._check_sample(problem, inputs, n, idx, {"out": right}) == ""
    wrong = right.copy()
    wrong[3] = np.nextafter(wrong[3], np.inf) * 1.0001
    assert "1 of 1000 sampled elements of `out` are wrong" in judge._check_sample(
        problem, inputs, n, idx, {"out": wrong})
    spilled = right.copy()
    spilled[-1] = 0.0
    assert "past the end" in judge._check_sample(problem, inputs, n, idx, {"out": spilled})


# ---- self-study: graded cells come from the release ----------------------------------------------

def _chapter(tree: str, chapter: str = "ch01_introduction"):
    return nbformat.read(str(REPO / tree / chapter / f"{chapter}.ipynb"), as_version=4)


def _index(nb, grade_id):
    return next(i for i, c in enumerate(nb.cells)
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def test_the_release_of_a_workspace_notebook_or_a_renamed_copy_is_found(tmp_path):
    release = REPO / "course" / "ch01_introduction" / "ch01_introduction.ipynb"
    nb = _chapter("solutions")
    mine = tmp_path / "ch01_introduction" / "ch01_introduction.ipynb"
    assert grade.release_of(mine, nb) == release                      # by its folder's name
    assert grade.release_of(tmp_path / "my copy.ipynb", nb) == release  # by its grade cells
    assert grade.release_of(tmp_path / "other.ipynb", nbformat.v4.new_notebook()) is None


def test_a_deleted_or_edited_graded_cell_scores_zero_and_points_come_from_the_release():
    release, nb = _chapter("course"), _chapter("solutions")
    del nb.cells[_index(nb, "amdahl_test")]
    saxpy = nb.cells[_index(nb, "saxpy_test")]
    saxpy.source = "ag.problems.ch01.saxpy.check(my_numpy_saxpy)"    # another function checked
    thread_ids = nb.cells[_index(nb, "thread_ids_test")]
    thread_ids.metadata["nbgrader"]["points"] = 100                     # points are the release's
    thread_ids.source += "\nprint('a comment or a print changes nothing')"
    rows = {g: (index, checks, points, why)
            for index, g, checks, points, why in grade.graded_from_release(nb, release)}
    assert list(rows) == ["amdahl_test", "thread_ids_test", "saxpy_test"]
    index, _, points, why = rows["amdahl_test"]
    assert index is None and points == 2
    assert "`amdahl_test` is missing" in why and "ag.problems.ch01.amdahl.check(amdahl_speedup)" in why
    _, _, points, why = rows["saxpy_test"]
    assert points == 3 and "`saxpy_test` was edited" in why and "check(saxpy)" in why
    index, checks, points, why = rows["thread_ids_test"]
    assert why == "" and points == 3 and nb.cells[index] is thread_ids
    assert [(c.problem, c.kind, c.func) for c in checks] == [
        ("ch01.thread_ids", "check", "thread_ids")]


def test_aag_grade_counts_a_deleted_graded_cell_as_zero_out_of_the_release_total(tmp_path, capsys):
    nb = _chapter("solutions")
    del nb.cells[_index(nb, "thread_ids_test")]
    nb.cells[_index(nb, "saxpy_test")].source = "ag.problems.ch01.saxpy.check(thread_ids)"
    path = tmp_path / "ch01_introduction" / "ch01_introduction.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, str(path))
    # Only amdahl (a host function: quick) is judged; the other two score 0 without a run.
    assert grade.main([str(path), "--no-sandbox"]) == 0
    out = capsys.readouterr().out
    assert "thread_ids_test (3 pt) ✗" in out and "`thread_ids_test` is missing" in out
    assert "saxpy_test (3 pt) ✗" in out and "`saxpy_test` was edited" in out
    assert "amdahl_test (2 pt) ✓" in out
    assert "Score: 2 / 8 auto-graded points" in out and "2 graded cells missing or edited (0 points)" in out


def test_a_syntax_error_in_the_solution_cell_is_reported_as_such_with_its_line():
    broken = GOOD_ADD.replace("def add_vectors(x, y, out):", "def add_vectors(x, y, out)")
    result = run(broken, checks=VECTOR_ADD[:1])
    assert not result.passed
    assert "SyntaxError" in result.error and "line 7 of the cell" in result.error, result.error
    assert "`def add_vectors(x, y, out)`" in result.error and "`solution`" in result.error
    assert "did that cell raise" not in result.error
    assert result.details["cell_errors"][0]["error"].startswith("SyntaxError")


GOOD_GRID_STRIDE = '''
@cuda.jit
def vector_add_grid_stride(x, y, out):
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = x[i] + y[i]
'''


@pytest.mark.skipif(ag.backend.is_gpu, reason="simulates a GPU judge by patching it; CPU mode only")
def test_a_speed_test_leaves_its_student_process_to_the_next_exercise(monkeypatch):
    """The course reference and the copy are timed before any of the notebook's code runs, so
    after a speed test the student process only frees its buffers and runs on into the next
    exercise: one process for the notebook, no cell run twice. The GPU is simulated (the judge is
    told it has one; the speed protocol runs on the simulator with host clocks, the copy and the
    CPU baseline stand-ins, the bar set so that any time passes: the protocol is under test)."""
    from autograder.core.spec import SpeedBar
    from autograder.grading import speed
    from autograder.machine import timing
    problem = ag.problems.ch02.vector_add_grid_stride
    monkeypatch.setattr(judge, "on_gpu", lambda: True)
    monkeypatch.setattr(type(problem), "sizes", property(lambda self: self.cpu_sizes))
    monkeypatch.setattr(problem, "cpu_sizes", problem.cpu_sizes.__class__(
        **{**problem.cpu_sizes.__dict__, "speed": 3001}))
    monkeypatch.setattr(timing, "speed_blocks", lambda n, threads: 3)
    monkeypatch.setattr(timing, "copy_ceiling", lambda nbytes: timing.Stats(
        "copy ceiling (stand-in)", 1e-6, 1, 1e-6, 0.0, nbytes, 0))
    label = problem.baselines[problem.speed.baseline].label
    monkeypatch.setattr(speed, "cpu_baselines", lambda p, n, only=None: [
        timing.Stats(label, 1e9, 1, 1e9, 0.0, 0, 0)])
    monkeypatch.setattr(speed, "speed_bar", lambda p: SpeedBar(
        min_fraction_of_reference=0.0, baseline=problem.speed.baseline, min_speedup=0.0))
    started = []
    real = judge.StudentProcess.__init__
    monkeypatch.setattr(judge.StudentProcess, "__init__",
                        lambda self, *a, **k: (started.append(1), real(self, *a, **k))[1])
    nb = _notebook((SETUP + "runs = 0", None), (GOOD_GRID_STRIDE + "\nruns += 1", None),
                   ("ag.problems.ch02.vector_add_grid_stride.check_speed(vector_add_grid_stride)",
                    "stride_speed"),
                   ("assert runs == 1, runs\n" + GOOD_SAXPY, None), (CHECK_SAXPY, "saxpy"))
    results = judge.judge_notebook(nb, settings(speed_calls=4))
    speed_result, saxpy = results["stride_speed"], results["saxpy"]
    assert speed_result.passed, speed_result.error
    phases = speed_result.details["speed"]["seconds"]
    assert "course reference" in phases and "freeing the buffers" in phases, phases
    assert "closing the student process" not in phases, phases
    assert saxpy.passed, saxpy.error
    assert len(started) == 1, started
    assert saxpy.details["cells_run"] == 1 and saxpy.details["cell_errors"] == []


def test_the_gpu_lock_waits_on_another_users_lock_file(monkeypatch, tmp_path):
    """On a machine shared by several users, the speed tests' lock file in /tmp belongs to whoever
    made it first; the others may not open it for writing (nor with O_CREAT in a sticky folder).
    Taking the lock must still work, and still exclude: flock needs only a read-only descriptor."""
    import fcntl
    import os
    path = tmp_path / "aag-gpu-all.lock"
    path.write_text("")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "all")
    real_open = os.open

    def other_users_file(name, flags, *mode):
        if str(name) == str(path) and flags & (os.O_CREAT | os.O_RDWR | os.O_WRONLY):
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, *mode)

    monkeypatch.setattr(os, "open", other_users_file)
    with judge.gpu_lock(tmp_path):
        probe = real_open(path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):       # held: a second taker would wait
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)


@pytest.mark.skipif(ag.backend.is_gpu, reason="a grader with a GPU times the speed cell at once")
def test_speed_left_for_a_gpu_is_marked_for_grade_all(tmp_path):
    """Without a GPU and speed_without_gpu "defer": the speed cell scores zero now, says why, and
    judge.json marks it, so that grade-all --speed-only on a GPU machine finds the submission."""
    from autograder.tools import grade_all
    nb = _notebook((SETUP, None), (GOOD_GRID_STRIDE, None),
                   ("ag.problems.ch02.vector_add_grid_stride.check_speed(vector_add_grid_stride)",
                    "stride_speed"))
    result = judge.judge_notebook(nb, settings(speed_without_gpu="defer"))["stride_speed"]
    assert not result.passed and "not graded yet: this grader has no GPU" in result.error
    assert result.details["speed_deferred"] is True
    graded = tmp_path / "autograded" / "ana" / "ch02"
    graded.mkdir(parents=True)
    (graded / "judge.json").write_text(json.dumps({"stride_speed": {"details": result.details}}))
    assert grade_all.speed_deferred(tmp_path, "ch02", "ana")
    (graded / "judge.json").write_text(json.dumps({"stride_speed": {"details": {}}}))
    assert not grade_all.speed_deferred(tmp_path, "ch02", "ana")
    assert not grade_all.speed_deferred(tmp_path, "ch02", "ben")       # never graded
