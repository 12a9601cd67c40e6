"""ExecuteGuarded on small synthetic notebooks (pure Python, a few seconds of timeout)."""

from __future__ import annotations

import json
import math
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.nbgrader_ext import ExecuteGuarded

pytestmark = pytest.mark.slow

TIMEOUT = 5

# A loop nbgrader's interrupt cannot stop, like a simulated CUDA kernel spinning in worker threads:
# SIGINT is ignored, so only killing the kernel ends it.
UNSTOPPABLE = """\
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
print("about to loop")
while True:
    pass
"""
# The same, waiting instead of computing (a deadlock): it uses no processor time, so only the
# wall-clock backstop stops it.
UNSTOPPABLE_ASLEEP = UNSTOPPABLE.replace("    pass", "    time.sleep(0.05)")


def _nbgrader(grade_id, grade=False, solution=False, points=0):
    meta = {"grade": grade, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def solution_cell(source, grade_id):
    return new_code_cell(source, metadata=_nbgrader(grade_id, solution=True))


def test_cell(source, grade_id, points=1):
    return new_code_cell(source, metadata=_nbgrader(grade_id, grade=True, points=points))


test_cell.__test__ = False  # a cell factory, not a pytest test


def log_line(name):
    """Code that appends a line to a log file: counts how often a cell ran, across kernels."""
    return f"open({name!r}, 'a').write('ran\\n')\n"


def run(nb, tmp_path, timeout=TIMEOUT):
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    pp = ExecuteGuarded(timeout=timeout)
    start = time.monotonic()
    nb, _ = pp.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    return nb, time.monotonic() - start


def errors(cell):
    return [o for o in cell.outputs if o.output_type == "error"]


def text(cell):
    out = []
    for o in cell.outputs:
        out.append(o.get("text") or o.get("data", {}).get("text/plain", "") or o.get("evalue", ""))
    return "".join(out)


@pytest.fixture(scope="module")
def hung(tmp_path_factory):
    """One notebook with an unstoppable test cell in the middle, run once for the tests below."""
    tmp = tmp_path_factory.mktemp("hang")
    nb = new_notebook(cells=[
        new_markdown_cell("# setup"),
        new_code_cell(log_line("setup.log") + "base = 41"),
        solution_cell(log_line("solution.log") + "def answer():\n    return base + 1", "answer"),
        new_code_cell(log_line("failed.log") + "raise ValueError('a cell that fails')"),
        test_cell(log_line("test.log") + "assert answer() == 42", "answer_test"),
        test_cell(UNSTOPPABLE, "hang_test"),
        test_cell("assert answer() == 42\nprint('still graded')", "after_test"),
        test_cell("answer()", "value_test"),
        new_code_cell("later = answer() + 1"),
        test_cell("later", "later_test"),
    ])
    nb, elapsed = run(nb, tmp)
    return nb, elapsed, tmp


def test_hanging_cell_costs_one_timeout(hung):
    """Does a hanging cell cost one timeout, not one per remaining cell?"""
    nb, elapsed, _ = hung
    # Four cells follow the hang; plain Execute would give up on the notebook (or wait on each).
    # Exactly one cell timed out, and the run waited for it; the wall-clock bound is only a
    # backstop (five timeouts would take 25 s of waiting): a busy machine must not fail this.
    timed_out = [c for c in nb.cells if any(o.get("ename") == "CellTimeoutError" for o in
                                            c.get("outputs", []))]
    assert len(timed_out) == 1, [c.source[:40] for c in timed_out]
    assert TIMEOUT <= elapsed < 6 * TIMEOUT + 30, elapsed


def test_hanging_cell_gets_a_clear_error(hung):
    """Does the cell that hung keep what it printed and say it ran past the timeout?"""
    nb, _, _ = hung
    cell = nb.cells[5]
    assert "about to loop" in text(cell)
    (error,) = errors(cell)
    assert error.ename == "CellTimeoutError"
    assert f"ran past {TIMEOUT} s and was stopped: an endless loop?" in error.evalue
    assert any("endless loop" in line for line in error.traceback)


def test_cells_after_the_hang_run_with_the_state_rebuilt(hung):
    """Do the cells after the hang still run, seeing the names the setup and solution cells defined?"""
    nb, _, _ = hung
    assert errors(nb.cells[6]) == [] and "still graded" in text(nb.cells[6])
    assert text(nb.cells[7]) == "42"
    assert errors(nb.cells[8]) == []
    assert text(nb.cells[9]) == "43"


def test_only_successful_non_test_cells_are_replayed(hung):
    """Are setup and solution cells replayed once, and test cells and failed cells not at all?"""
    _, _, tmp = hung
    runs = {name: (tmp / f"{name}.log").read_text().count("ran") for name in
            ("setup", "solution", "failed", "test")}
    assert runs == {"setup": 2, "solution": 2, "failed": 1, "test": 1}


def test_replayed_cells_keep_their_outputs(tmp_path):
    """Does replaying leave the outputs of the earlier cells as they were the first time?"""
    nb = new_notebook(cells=[
        new_code_cell("import itertools\ncounter = itertools.count()\nprint('setup', next(counter))"),
        test_cell(UNSTOPPABLE, "hang_test"),
        test_cell("next(counter)", "counter_test"),
    ])
    nb, _ = run(nb, tmp_path)
    assert text(nb.cells[0]) == "setup 0\n"
    # The replay consumed 0 in the new kernel, so the counter continues from 1 there.
    assert text(nb.cells[2]) == "1"


def test_dead_kernel_costs_only_its_cell(tmp_path):
    """Does a cell that kills the kernel score as an error while the later cells still run?"""
    nb = new_notebook(cells=[
        new_code_cell("import os\nbase = 1"),
        test_cell("os._exit(1)", "dies_test"),
        test_cell("base + 1", "after_test"),
    ])
    nb, elapsed = run(nb, tmp_path)
    (error,) = errors(nb.cells[1])
    assert error.ename == "DeadKernelError" and "kernel died" in error.evalue
    assert text(nb.cells[2]) == "2"
    assert elapsed < TIMEOUT + 10, elapsed


def test_hang_during_replay_does_not_hang_again(tmp_path):
    """If a replayed cell hangs too, is the replay abandoned after one more timeout, not retried?"""
    # The setup cell hangs only on its second run, i.e. during the replay.
    setup = ("import os, signal, time\n"
             "if os.path.exists('ran-once'):\n"
             "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
             "    while True:\n"
             "        pass\n"
             "open('ran-once', 'w').close()\n"
             "base = 1")
    nb = new_notebook(cells=[
        new_code_cell(setup),
        test_cell(UNSTOPPABLE, "hang_test"),
        test_cell("base", "needs_setup_test"),
        test_cell("1 + 1", "independent_test"),
    ])
    timeout = 3
    nb, elapsed = run(nb, tmp_path, timeout=timeout)
    assert errors(nb.cells[1])[0].ename == "CellTimeoutError"
    # Without the state, a test that needs it fails; one that does not still passes.
    assert errors(nb.cells[2])[0].ename == "NameError"
    assert text(nb.cells[3]) == "2"
    # Two timeouts (the cell, then the replay; the replay is polled every 5 s), no more.
    assert elapsed < 2 * timeout + 5 + 12, elapsed


def test_a_cell_slow_only_because_the_machine_is_busy_is_not_stopped(tmp_path):
    """The timeout counts the kernel's processor time: a cell whose wall time passes the timeout
    while it uses little processor time (as on a grading machine shared with other submissions;
    here it sleeps) runs to its end, and scores."""
    nb = new_notebook(cells=[
        new_code_cell("import time\nbase = 1"),
        test_cell("time.sleep(5)\nbase + 1", "slow_test"),
    ])
    nb, elapsed = run(nb, tmp_path, timeout=2)
    assert not errors(nb.cells[1]), errors(nb.cells[1])
    assert text(nb.cells[1]) == "2"
    assert 5 <= elapsed < 30, elapsed


def test_a_cell_that_waits_forever_is_stopped_at_the_backstop(tmp_path, monkeypatch):
    """Code that waits forever (no processor time) is stopped at the wall-clock backstop."""
    from autograder import sandbox
    monkeypatch.setattr(sandbox, "WALL_SLACK", 2.0)   # backstop 4 * 2 + 2 = 10 s
    nb = new_notebook(cells=[
        new_code_cell("base = 1"),
        test_cell(UNSTOPPABLE_ASLEEP, "asleep_test"),
        test_cell("base + 1", "after_test"),
    ])
    nb, elapsed = run(nb, tmp_path, timeout=2)
    assert errors(nb.cells[1])[0].ename == "CellTimeoutError"
    assert text(nb.cells[2]) == "2"
    assert 10 <= elapsed < 30, elapsed


def test_isolated_cells_are_not_run_when_grading(tmp_path):
    """Is a cell that runs in a process of its own (%%isolated) left out, saying why, while the
    cells around it run? (It defines nothing the notebook uses; the judge skips it too.)"""
    nb = new_notebook(cells=[
        new_code_cell("base = 41"),
        new_code_cell("%%isolated\n" + log_line("isolated.log") + "print('ran in its own process')"),
        test_cell("assert base + 1 == 42\nprint('graded')", "after_test"),
    ])
    nb, _ = run(nb, tmp_path)
    assert "not run when grading" in text(nb.cells[1]) and not errors(nb.cells[1])
    assert not (tmp_path / "isolated.log").exists()
    assert text(nb.cells[2]) == "graded\n" and not errors(nb.cells[2])


# --- limits from the solution's own time -----------------------------------------------------------

SOLUTION_WORK = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass"


def _course_with_solution(tmp_path):
    """A course folder whose source notebook's "work" cell spins 0.3 s of processor time."""
    course = tmp_path / "course"
    nb = new_notebook(cells=[new_code_cell("x = 1"), solution_cell(SOLUTION_WORK, "work")])
    nb.cells[0].id, nb.cells[1].id = "setup", "work-cell"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (course / "source" / "a1").mkdir(parents=True)
    nbformat.write(nb, str(course / "source" / "a1" / "nb.ipynb"))
    return course, nb


def test_a_hang_costs_a_multiple_of_the_solutions_time(tmp_path, monkeypatch):
    """With the assignment's source notebook at hand, does a cell that never ends stop at a
    multiple of what the same cell of the solution needs, not at the notebook-wide timeout; and
    is the solution measured once per machine?"""
    from traitlets.config import Config
    monkeypatch.setenv("AAG_CACHE_DIR", str(tmp_path / "cache"))
    course, solution = _course_with_solution(tmp_path)
    config = Config()
    config.CourseDirectory.root = str(course)
    submission = nbformat.from_dict(json.loads(json.dumps(solution)))
    submission.cells[1].source = UNSTOPPABLE                 # the learner's cell never ends
    submission.cells.append(new_code_cell("print('after')"))  # a cell the learner added
    work = tmp_path / "work"
    work.mkdir()
    resources = {"metadata": {"path": str(work)}, "nbgrader": {"assignment": "a1", "notebook": "nb"}}
    pp = ExecuteGuarded(config=config, timeout=120, limit_margin=5, limit_floor=3)
    start = time.monotonic()
    nb, resources = pp.preprocess(submission, resources)
    elapsed = time.monotonic() - start
    (error,) = errors(nb.cells[1])
    limit = resources["aag_cell_limits"]["work"]
    assert 3 <= limit < 5 * 0.3 + 3, limit              # 5 x 0.3 s, at least 3 s
    assert f"ran past {math.ceil(limit)} s and was stopped" in error.evalue
    assert elapsed < 60, elapsed                          # not the 120 s timeout
    assert "after" in text(nb.cells[2])
    assert resources["aag_cell_limits"][nb.cells[2].id] == limit   # the slowest solution cell's
    kept = json.loads((tmp_path / "cache" / "cell-seconds.json").read_text())
    (seconds,) = kept.values()
    assert 0.25 <= seconds["work-cell"] < 1.5, seconds
    # a second submission takes the kept measurement: the solution does not run again
    marker = tmp_path / "ran"
    monkeypatch.setattr(ExecuteGuarded, "_measure", lambda self, source: marker.write_text("x"))
    ExecuteGuarded(config=config, timeout=120, limit_margin=5, limit_floor=3).preprocess(
        new_notebook(cells=[new_code_cell("y = 2")], metadata=solution.metadata),
        {"metadata": {"path": str(work)}, "nbgrader": {"assignment": "a1", "notebook": "nb"}})
    assert not marker.exists()
