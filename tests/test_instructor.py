"""The README's "For instructors" walk-through, run as written, with two learners as Unix users.

The README's instructor block (the one after the ``instructor-walkthrough`` marker) is run line by
line with bash, in a copy of this clone (its ``.venv`` linked, so ``./aag`` installs nothing), as
root: only the first line's folders (the exchange, the learners' environment) are the test's own,
in a temporary folder every user can reach, and the due date is set between the two learners'
submissions. The comment line that says what learners do is done by two throwaway Unix users with
the learners' environment that ``aag course init`` made: they fetch, answer (two of them with the
chapter's solution, one with a kernel that never ends) and submit through nbgrader's exchange, and
fetch their feedback at the end.

What must hold: the learners run the environment without touching the instructor's home; the
roster's names reach the gradebook and the export; the learner who submitted after the due date
loses the default late penalty (10% of the notebook's points for a day or part of one) in the
gradebook, the CSV and their feedback page, and the other does not; the CSV is the instructor's
alone and git ignores it; the hang costs about two short limits (the cell's, derived from the
solution's time, and the check's), not five minutes; ``.venv/bin/nbgrader db`` works without ``.venv/bin`` on PATH; running
``aag release`` again changes nothing in ``course/``.

Runs where it can make Unix users (root, useradd, setpriv) and a Python that every user can run
(for the learners' environment); ``AAG_CLASS_TEST``: ``require`` (CI) fails when something is
missing, ``auto`` (default) skips saying what, ``off`` skips.
"""

from __future__ import annotations

import csv
import datetime
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import nbgrader_helpers as h
import test_jupyterhub as users
from autograder.grading import cell_limits
from autograder.tools import course as aag_course

pytestmark = pytest.mark.slow

MODE_ENV = "AAG_CLASS_TEST"
CHAPTER = "ch02_data_parallel"
MARKER = "<!-- instructor-walkthrough"


def walkthrough(readme: str) -> list[str]:
    """The command lines of the README's instructor block (a comment line kept as one line)."""
    after = readme.split(MARKER, 1)[1]
    block = after.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def unavailable_reason() -> str | None:
    if os.name != "posix" or os.geteuid() != 0:
        return "it makes Unix users for the learners: run it as root (CI does)"
    missing = [tool for tool in ("useradd", "userdel", "setpriv") if shutil.which(tool) is None]
    if missing:
        return f"missing {', '.join(missing)} (Debian packages passwd, util-linux)"
    try:
        aag_course.shared_python()
    except aag_course.CourseError as exc:
        return str(exc)
    return None


def _extras() -> str:
    """The extras the linked .venv was installed with, so that ./aag sees nothing to install."""
    stamp = (Path(h.REPO) / ".venv" / ".aag-installed").read_text()
    extras = stamp.split("[", 1)[1].split("]", 1)[0].split(",")
    return ",".join(e for e in extras if e != "dev")


def _copy_of_this_clone(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=h.REPO,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        src = Path(h.REPO) / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / ".venv").symlink_to(Path(h.REPO) / ".venv")


@pytest.fixture
def class_folders():
    if (mode := h.run_mode(MODE_ENV)) == "off":
        pytest.skip(f"{MODE_ENV}=off")
    if (why := unavailable_reason()) is not None:
        if mode == "require":
            pytest.fail(f"the instructor walk-through cannot run here: {why}")
        pytest.skip(why)
    users._remove_users_left_by_dead_runs()
    top = Path(tempfile.mkdtemp(prefix="aag-hub-class-"))     # cleaned by a later run if killed
    top.chmod(0o755)
    (top / "homes").mkdir(mode=0o755)
    tag = secrets.token_hex(3)
    learners = {}
    try:
        for name in ("ana", "ben", "cy"):
            learners[name] = users._add_user(f"aag{tag}{name}", top / "homes" / f"aag{tag}{name}")
        yield top, learners
    finally:
        for entry in learners.values():
            users._remove_user(entry.pw_name)
        shutil.rmtree(top, ignore_errors=True)


def test_readme_instructor_walkthrough(class_folders, tmp_path):
    """Does the README's instructor section take a class from an empty exchange to grades?"""
    top, learners = class_folders
    lines = walkthrough((Path(h.REPO) / "README.md").read_text())
    first, *commands = lines
    assert first.startswith("EXCHANGE=") and "LEARNERS_ENV=" in first, first
    clone = tmp_path / "course"
    _copy_of_this_clone(clone)
    (clone / "roster.csv").write_text(
        "id,first_name,last_name,email\n"
        f"{learners['ana'].pw_name},Ana,Lima,ana@example.org\n"
        f"{learners['ben'].pw_name},Ben,Okoro,\n")
    env = {**h.env(), "AAG_EXTRAS": _extras()}
    env.pop("PYTHONPATH", None)        # the clone's ./aag finds its own package
    variables = f"EXCHANGE={top / 'exchange'} LEARNERS_ENV={top / 'env'}"

    def instructor(line: str, due: datetime.datetime | None = None) -> str:
        if due is not None:
            line = re.sub(r'--due "[^"]*"', f'--due "{due:%Y-%m-%d %H:%M:%S} UTC"', line)
        p = subprocess.run(["bash", "-ec", f"{variables}\n{line}"], cwd=clone, env=env,
                           capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, f"{line}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
        return p.stdout + p.stderr

    def learner(name: str, *steps: str) -> None:
        bindir = top / "env" / "bin"
        script = " && ".join(step.replace("nbgrader ", f"{bindir}/nbgrader ", 1) for step in steps)
        entry = learners[name]
        p = users.as_user(entry, "bash", "-c", f"cd {entry.pw_dir} && {script}")
        assert p.returncode == 0, f"{name}: {script}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"

    solution = top / "solution.ipynb"      # what ana and ben hand in
    shutil.copy2(Path(h.REPO) / "solutions" / CHAPTER / f"{CHAPTER}.ipynb", solution)
    solution.chmod(0o644)
    hang = top / "hang.ipynb"              # cy's: every launch of the kernel spins forever
    h.write_nb(h.mutate(h.read_nb(solution), "vector_add_solution", "    if i < out.size:",
                        "    while out.size > 0:\n        pass\n    if i < out.size:"), hang)
    hang.chmod(0o644)

    def answer(notebook: Path) -> list[str]:
        return [f"nbgrader fetch_assignment {CHAPTER}", f"cp {notebook} {CHAPTER}/{CHAPTER}.ipynb",
                f"nbgrader submit {CHAPTER}"]

    learners_step = next(i for i, line in enumerate(commands) if line.lstrip().startswith("#"))
    release = next(line for line in commands if line.startswith("./aag release"))
    far = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=30)
    for line in commands[:learners_step]:
        instructor(line, due=far)
    assert (top / "exchange").stat().st_mode & 0o7777 == 0o1777
    released = (clone / "course" / CHAPTER / f"{CHAPTER}.ipynb").read_bytes()
    assert released == (Path(h.REPO) / "course" / CHAPTER / f"{CHAPTER}.ipynb").read_bytes()

    learner("ana", *answer(solution))                              # on time
    learner("cy", *answer(hang))
    due = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)
    again = instructor(release, due=due)                           # the due date moves earlier
    assert "released already, unchanged" in again
    while datetime.datetime.now(datetime.timezone.utc) < due + datetime.timedelta(seconds=1):
        time.sleep(0.1)
    learner("ben", *answer(solution))                              # late

    outputs = [instructor(line) for line in commands[learners_step + 1:]]
    collected, graded = outputs[0], outputs[1]
    assert f"{learners['ana'].pw_name} (Ana Lima): on time" in collected, collected
    assert f"{learners['ben'].pw_name} (Ben Okoro): late by" in collected, collected

    # cy's hang: nbgrader's kernel stops the cell at what the solution's cell needs times ten
    # (at least FLOOR s, processor time), the judge stops the check's case at its own limit; the
    # other exercise keeps its points, and the whole costs about those two limits more than a
    # correct submission (1.5: the spinning process may get part of a core on a busy machine)
    seconds = {who: float(s) for who, s in re.findall(r"\] (\S+): .* points in (\d+) s", graded)}
    cy, ana = learners["cy"].pw_name, learners["ana"].pw_name
    assert seconds[cy] - seconds[ana] < 1.5 * (cell_limits.FLOOR + 30) + 10, seconds
    stopped = h.read_nb(clone / "autograded" / cy / CHAPTER / f"{CHAPTER}.ipynb")
    messages = [o.get("evalue", "") for c in stopped.cells for o in c.get("outputs", [])
                if o.get("output_type") == "error"]
    assert any(f"ran past {cell_limits.FLOOR:g} s and was stopped" in m for m in messages), messages

    grades = clone / "grades.csv"
    assert grades.stat().st_mode & 0o077 == 0, "the grades are readable by others"
    ignored = subprocess.run(["git", "check-ignore", "-q", "grades.csv"], cwd=h.REPO)
    assert ignored.returncode == 0, "git does not ignore grades.csv"
    rows = {r["student_id"]: r for r in csv.DictReader(grades.open())}
    ana, ben = rows[learners["ana"].pw_name], rows[learners["ben"].pw_name]
    assert (ana["first_name"], ana["last_name"], ana["email"]) == ("Ana", "Lima", "ana@example.org")
    assert float(ana["raw_score"]) > 0 and float(ana["raw_score"]) == float(ben["raw_score"])
    assert float(ana["late_submission_penalty"]) == 0
    assert float(ben["late_submission_penalty"]) == pytest.approx(0.1 * float(ben["max_score"]))
    assert float(ben["score"]) == pytest.approx(float(ben["raw_score"]) - 0.1 * float(ben["max_score"]))
    hung = rows[cy]
    assert float(hung["vector_add_test"]) == 0 and hung["grid_stride_test"] == ana["grid_stride_test"]

    for name in learners:
        learner(name, f"nbgrader fetch_feedback {CHAPTER}")
    pages = {name: list(Path(entry.pw_dir, CHAPTER, "feedback").rglob("*.html"))
             for name, entry in learners.items()}
    assert all(len(found) == 1 for found in pages.values()), pages
    assert "ran past" in pages["cy"][0].read_text()
    assert "Late submission penalty" in pages["ben"][0].read_text()
    assert "Late submission penalty" not in pages["ana"][0].read_text()

    # nbgrader's own commands keep working, from the environment, without it on PATH
    p = subprocess.run([str(clone / ".venv" / "bin" / "nbgrader"), "db", "student", "list"],
                       cwd=clone, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "(Lima, Ana)" in p.stdout + p.stderr, p.stdout + p.stderr
