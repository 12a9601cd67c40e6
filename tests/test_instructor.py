"""The README's "For instructors" walk-through, run as written, with learners as Unix users.

The README's instructor block (the one after the ``instructor-walkthrough`` marker) is run line by
line with bash in a copy of this clone (its ``.venv`` linked, so ``./aag`` installs nothing):
first as root, then as an instructor who is not root (their clone in their own home; root makes
the exchange and gives them the learners' environment's folder first, as the README says). Only
the first line's folders are the test's own, in a temporary folder every user can reach, and the
due date is set between the learners' submissions. The comment line that says what learners do is
done by three throwaway Unix users with the learners' environment that ``aag course init`` made:
they fetch, answer (two with the chapter's solution, one with a kernel that never ends) and submit
through nbgrader's exchange, and fetch their feedback at the end (in the second run, the
instructor's who is not root, one learner hands in the solution: the hang and the late
submission are root's run's).

What must hold: the learners run the environment without touching the instructor's home; the
roster's names reach the gradebook and the export; the learner who submitted after the due date
loses the default late penalty (10% of the notebook's points for a day or part of one) in the
gradebook, the CSV and their feedback page, and the other does not; the hang costs about two short
limits (the cell's, derived from the solution's time, and the check's), not five minutes; the CSV
is the instructor's alone and git ignores it; ``.venv/bin/nbgrader db`` works without
``.venv/bin`` on PATH, and an honest submission's autograde log has no warning about it; running
``aag release`` again changes nothing in ``course/``.

Runs where it can make Unix users (root, useradd, setpriv; unshare when the course environment is
in a folder other users cannot reach) and a Python that every user can run (for the learners'
environment); ``AAG_CLASS_TEST``: ``require`` (CI) fails when something is missing, ``auto``
(default) skips saying what, ``off`` skips.
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

import autograder as ag
import nbgrader_helpers as h
import test_jupyterhub as users
from autograder.grading import cell_limits
from autograder.tools import course as aag_course

pytestmark = pytest.mark.slow

MODE_ENV = "AAG_CLASS_TEST"
CHAPTER = "ch02_data_parallel"
MARKER = "<!-- instructor-walkthrough"
CHECK_LIMIT = 8     # seconds of processor time a case of the graded chapter may take


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
    if users.private_tops(users.course_paths()) and not users.can_make_a_view():
        return ("`unshare --mount` (util-linux, and the right to mount), to show the course's "
                "private environment to the instructor who is not root")
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
    people = {}
    try:
        for name in ("ana", "ben", "cy", "teacher"):
            people[name] = users._add_user(f"aag{tag}{name}", top / "homes" / f"aag{tag}{name}")
        yield top, people
    finally:
        for entry in people.values():
            users._remove_user(entry.pw_name)
        shutil.rmtree(top, ignore_errors=True)


class Instructor:
    """Runs the README's lines in a clone of the course, as root or as another Unix user (then
    through a mount namespace that shows this test's course environment, if it lives in a folder
    other users cannot reach, such as /root: see tests/test_jupyterhub.py)."""

    def __init__(self, clone: Path, variables: str, user=None):
        self.clone, self.variables, self.user = clone, variables, user
        # A hung case is stopped after CHECK_LIMIT s of processor time, not the course's 20 s and
        # more: that limit is proven in tests/test_nbgrader_roundtrip.py and costs CI's 2 cores
        # as much again here; the cell's limit derived from the solution's run is this test's.
        base = {"AAG_EXTRAS": _extras(), "AAG_SANDBOX": h.sandbox_mode(), "LANG": "C.UTF-8",
                "AAG_CHECK_TIMEOUT": str(CHECK_LIMIT)}
        if user is None:
            self.env = {**h.env(), **base}
            self.env.pop("PYTHONPATH", None)        # the clone's ./aag finds its own package
            self.prefix: list[str] = []
        else:
            self.env = {**base, "HOME": user.pw_dir, "USER": user.pw_name, "PATH": "/usr/bin:/bin"}
            self.prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                           "--init-groups", "--", "env", "-i",
                           *(f"{k}={v}" for k, v in self.env.items())]
            tops = users.private_tops(users.course_paths())
            if tops:
                view = users.view_script(tops, clone.parent.parent.parent / "view")
                self.prefix = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                               view, "sh", *self.prefix]

    def run(self, line: str, due: datetime.datetime | None = None) -> str:
        if due is not None:
            line = re.sub(r'--due "[^"]*"', f'--due "{due:%Y-%m-%d %H:%M:%S} UTC"', line)
        start = time.monotonic()
        p = subprocess.run([*self.prefix, "bash", "-ec", f"{self.variables}\n{line}"],
                           cwd=self.clone, env=self.env, capture_output=True, text=True,
                           timeout=900)
        print(f"{time.monotonic() - start:6.1f} s  {line.split('#')[0].strip()[:70]}")
        assert p.returncode == 0, f"{line}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
        return p.stdout + p.stderr


def walkthrough_as(instructor: Instructor, top: Path, exchange: Path, people: dict,
                   whole_class: bool = True) -> dict:
    """The README's block, with ana on time, cy's kernel hanging and ben late (with
    ``whole_class``; else ana alone hands in, on time); the checks that follow from it. Returns
    the graded rows of grades.csv by learner."""
    first, *commands = walkthrough((Path(h.REPO) / "README.md").read_text())
    assert first.startswith("EXCHANGE=") and "LEARNERS_ENV=" in first, first
    clone, env_dir = instructor.clone, top / "env"
    learners = {k: v for k, v in people.items()
                if k != "teacher" and (whole_class or k == "ana")}
    for entry in learners.values():                    # a fresh class: nothing fetched yet
        shutil.rmtree(Path(entry.pw_dir) / CHAPTER, ignore_errors=True)

    def learner(name: str, *steps: str) -> None:
        script = " && ".join(step.replace("nbgrader ", f"{env_dir}/bin/nbgrader ", 1)
                             for step in steps)
        entry = learners[name]
        # Three nbgrader commands in a row (fetch, copy, submit): 30 s each is plenty alone, but
        # a loaded 2-core CI machine took longer once.
        start = time.monotonic()
        p = users.as_user(entry, "bash", "-c", f"cd {entry.pw_dir} && {script}", timeout=180)
        print(f"{time.monotonic() - start:6.1f} s  {name}: {' && '.join(steps)[:60]}")
        assert p.returncode == 0, f"{name}: {script}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"

    solution = top / "solution.ipynb"      # what ana and ben hand in
    shutil.copy2(Path(h.REPO) / "solutions" / CHAPTER / f"{CHAPTER}.ipynb", solution)
    solution.chmod(0o644)
    hang_nb = top / "hang.ipynb"           # cy's: every launch of the kernel spins forever
    h.write_nb(h.mutate(h.read_nb(solution), "vector_add_solution", "    if i < out.size:",
                        "    while out.size > 0:\n        pass\n    if i < out.size:"), hang_nb)
    hang_nb.chmod(0o644)

    def answer(notebook: Path) -> list[str]:
        return [f"nbgrader fetch_assignment {CHAPTER}", f"cp {notebook} {CHAPTER}/{CHAPTER}.ipynb",
                f"nbgrader submit {CHAPTER}"]

    learners_step = next(i for i, line in enumerate(commands) if line.lstrip().startswith("#"))
    release = next(line for line in commands if line.startswith("./aag release"))
    far = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=30)
    for line in commands[:learners_step]:
        said = instructor.run(line, due=far)
        if line.startswith("./aag course init") and instructor.user is not None:
            # root's run installed these sources into the environment it gave this instructor
            assert "up to date" in said and "installing the course" not in said, said
    assert exchange.stat().st_mode & 0o7777 == 0o1777
    released = (clone / "course" / CHAPTER / f"{CHAPTER}.ipynb").read_bytes()
    assert released == (Path(h.REPO) / "course" / CHAPTER / f"{CHAPTER}.ipynb").read_bytes()

    learner("ana", *answer(solution))                              # on time
    if whole_class:
        learner("cy", *answer(hang_nb))
        due = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)
        again = instructor.run(release, due=due)                   # the due date moves earlier
        assert "released already, unchanged" in again
        while datetime.datetime.now(datetime.timezone.utc) < due + datetime.timedelta(seconds=1):
            time.sleep(0.1)
        learner("ben", *answer(solution))                          # late

    outputs = [instructor.run(line) for line in commands[learners_step + 1:]]
    collected, graded = outputs[0], outputs[1]
    ana = learners["ana"].pw_name
    assert f"{ana} (Ana Lima): on time" in collected, collected
    seconds = {who: float(s) for who, s in re.findall(r"\] (\S+): .* points in (\d+) s", graded)}
    grades = clone / "grades.csv"
    assert grades.stat().st_mode & 0o077 == 0, "the grades are readable by others"
    rows = {r["student_id"]: r for r in csv.DictReader(grades.open())}
    on_time = rows[ana]
    assert (on_time["first_name"], on_time["last_name"], on_time["email"]) == (
        "Ana", "Lima", "ana@example.org")
    assert float(on_time["raw_score"]) > 0
    assert float(on_time["late_submission_penalty"]) == 0
    if not whole_class:
        print(f"grade-all, seconds for one submission (teacher): {seconds[ana]:g}")
        learner("ana", f"nbgrader fetch_feedback {CHAPTER}")
        pages = list(Path(learners["ana"].pw_dir, CHAPTER, "feedback").rglob("*.html"))
        assert len(pages) == 1, pages
        assert "Late submission penalty" not in pages[0].read_text()
        return rows
    ben, cy = learners["ben"].pw_name, learners["cy"].pw_name
    assert f"{ben} (Ben Okoro): late by" in collected, collected

    # cy's hang: nbgrader's kernel stops the cell at what the solution's cell needs times ten
    # (at least FLOOR s of processor time: the message says which), the judge stops the check's
    # case at CHECK_LIMIT, and the other exercise keeps its points. In wall time
    # that is about 30 s more than a correct submission alone, twice that on CI's busy 2-core
    # machine (the spinning processes get part of a core); the one limit for every cell it
    # replaces, Execute.timeout (300 s), would cost at least 300.
    print(f"grade-all, seconds per submission (root): on time {seconds[ana]:g}, late "
          f"{seconds[ben]:g}, hung {seconds[cy]:g}")
    assert seconds[cy] - seconds[ana] < 150, seconds
    stopped = h.read_nb(clone / "autograded" / cy / CHAPTER / f"{CHAPTER}.ipynb")
    messages = [o.get("evalue", "") for c in stopped.cells for o in c.get("outputs", [])
                if o.get("output_type") == "error"]
    assert any(f"ran past {cell_limits.FLOOR:g} s and was stopped" in m for m in messages), \
        messages

    late, hung = rows[ben], rows[cy]
    assert float(on_time["raw_score"]) == float(late["raw_score"])
    assert float(late["late_submission_penalty"]) == pytest.approx(0.1 * float(late["max_score"]))
    assert float(late["score"]) == pytest.approx(
        float(late["raw_score"]) - 0.1 * float(late["max_score"]))
    assert float(hung["vector_add_test"]) == 0
    assert hung["grid_stride_test"] == on_time["grid_stride_test"]

    for name in learners:
        learner(name, f"nbgrader fetch_feedback {CHAPTER}")
    pages = {name: list(Path(entry.pw_dir, CHAPTER, "feedback").rglob("*.html"))
             for name, entry in learners.items()}
    assert all(len(found) == 1 for found in pages.values()), pages
    assert "ran past" in pages["cy"][0].read_text()
    assert "Late submission penalty" in pages["ben"][0].read_text()
    assert "Late submission penalty" not in pages["ana"][0].read_text()
    return rows


def _roster(clone: Path, people: dict) -> None:
    (clone / "roster.csv").write_text(
        "id,first_name,last_name,email\n"
        f"{people['ana'].pw_name},Ana,Lima,ana@example.org\n"
        f"{people['ben'].pw_name},Ben,Okoro,\n")


def test_readme_instructor_walkthrough(class_folders, tmp_path):
    """Does the README's instructor section take a class from an empty exchange to exported
    grades, run as written by root, and then by an instructor who is not root?"""
    top, people = class_folders

    # The two instructors' clones are copies of one copy of this clone: the same sources, even
    # if this clone is edited while the test runs (the second instructor's `course init` finds
    # the environment up to date).
    pristine = tmp_path / "pristine"
    _copy_of_this_clone(pristine)

    # root: makes the exchange and the learners' environment itself
    clone = tmp_path / "course"
    shutil.copytree(pristine, clone, symlinks=True)
    _roster(clone, people)
    root = Instructor(clone, f"EXCHANGE={top / 'exchange'} LEARNERS_ENV={top / 'env'}")
    walkthrough_as(root, top, top / "exchange", people)
    ignored = subprocess.run(["git", "check-ignore", "-q", "grades.csv"], cwd=h.REPO)
    assert ignored.returncode == 0, "git does not ignore grades.csv"

    # nbgrader's own commands keep working, from the environment, without it on PATH
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "AAG_SANDBOX": root.env["AAG_SANDBOX"]}
    nbgrader = str(clone / ".venv" / "bin" / "nbgrader")
    p = subprocess.run([nbgrader, "db", "student", "list"], cwd=clone, env=bare,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "(Lima, Ana)" in p.stdout + p.stderr, p.stdout + p.stderr
    # and an honest submission's autograde log warns of nothing but, on a grader without a GPU,
    # what its speed points will be worth
    shutil.rmtree(clone / "autograded" / people["ana"].pw_name)
    p = subprocess.run([nbgrader, "autograde", CHAPTER, "--student", people["ana"].pw_name],
                       cwd=clone, env=bare, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    warnings = [line for line in (p.stdout + p.stderr).splitlines()
                if "WARNING" in line or "ERROR" in line or "Warning" in line]
    expected = [] if ag.backend.is_gpu else ["No GPU on this grader"]
    assert [w for w in warnings if not any(e in w for e in expected)] == [], warnings

    # an instructor who is not root: root makes the exchange and gives them the learners'
    # environment's folder first, as the README says; their clone is in their own home
    teacher = people["teacher"]
    exchange = top / "exchange-2"
    exchange.mkdir(mode=0o755)
    exchange.chmod(0o1777)
    users._chown_tree(top / "env", teacher)
    clone = Path(teacher.pw_dir) / "course"
    shutil.copytree(pristine, clone, symlinks=True)
    _roster(clone, people)
    users._chown_tree(clone, teacher)
    # (the hang, the late submission and their grades were shown by root's run: here ana alone
    # hands in, which is enough to see every command work for this instructor, and saves two
    # learners' nbgrader commands and two autogrades on CI's 2 cores)
    walkthrough_as(Instructor(clone, f"EXCHANGE={exchange} LEARNERS_ENV={top / 'env'}", teacher),
                   top, exchange, people, whole_class=False)
    assert (clone / "grades.csv").stat().st_uid == teacher.pw_uid
