"""The whole nbgrader exchange, instructor and learner, through a temporary exchange directory.

release_assignment -> fetch_assignment -> submit -> collect -> autograde -> generate_feedback ->
release_feedback -> fetch_feedback. Instructor steps run as the current user. Learner steps run as
another Unix user (``nobody``, through setpriv) when this process is root and ``nobody`` can run
this Python interpreter: that also proves the exchange's permissions work across users. Where it
cannot (not root, no setpriv, or an interpreter under a private directory such as /root), the same
round trip runs as one user, and the test records which mode ran (``exchange_mode`` property).

It uses the pure-Python fixture chapter: what is tested is the exchange, not the chapter. Where
tests/test_jupyterhub.py runs (root, with the hub extra: CI), this test skips: the hub test runs the
same cycle with the instructor and two learners as real Unix users.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from html import unescape
from pathlib import Path

import pytest

import nbgrader_helpers as h

pytestmark = pytest.mark.slow

CHAPTER = h.FIXTURE_CHAPTER
COURSE_ID = "aag-exchange-test"
NOBODY = 65534
SETPRIV = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


def _can_drop_to_nobody(cwd: Path) -> bool:
    """Whether learner steps can run as uid 65534 with this interpreter and nbgrader.

    AAG_TEST_EXCHANGE_ONE_USER=1 forces the one-user round trip (to test that path too)."""
    if os.environ.get("AAG_TEST_EXCHANGE_ONE_USER"):
        return False
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = subprocess.run([*SETPRIV, sys.executable, "-c", "import nbgrader"], cwd=cwd,
                           env=h.env(HOME=str(cwd)), capture_output=True, timeout=120)
    return probe.returncode == 0


@pytest.fixture
def shared_tmp():
    """A directory every user can reach (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="aag-exchange-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_exchange_round_trip(tmp_path, shared_tmp, record_property):
    """Does a learner's work go out and come back, graded, with feedback they can fetch?"""
    import test_jupyterhub
    if test_jupyterhub.unavailable_reason() is None:
        # The hub test runs the same cycle here, with the learners as real Unix users.
        pytest.skip("tests/test_jupyterhub.py runs this round trip on this machine, across users")
    course = h.make_course(tmp_path / "instructor", [CHAPTER])
    exchange = shared_tmp / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # as an instructor sets up /srv/nbgrader/exchange
    home = shared_tmp / "learner"
    home.mkdir()

    multi_user = _can_drop_to_nobody(home)
    mode = "two users (learner as uid 65534)" if multi_user else "one user"
    record_property("exchange_mode", mode)
    print(f"exchange round trip: {mode}")
    if multi_user:
        os.chown(home, NOBODY, NOBODY)
    # nbgrader names a submission after the Unix account that submits it.
    student = pwd.getpwuid(NOBODY if multi_user else os.getuid()).pw_name

    common = [f"--Exchange.root={exchange}", f"--CourseDirectory.course_id={COURSE_ID}"]
    instructor_env = h.env()
    # The learner has a home (and Jupyter directories) of their own.
    learner_env = h.env(HOME=home, JUPYTER_CONFIG_DIR=home / ".jupyter",
                        JUPYTER_DATA_DIR=home / ".local")
    learner_cmd = SETPRIV if multi_user else ()

    def instructor(*args):
        return h.nbgrader(course, *args, *common, environ=instructor_env)

    def learner(*args):
        return h.nbgrader(home, *args, *common, environ=learner_env, user_cmd=learner_cmd)

    # Instructor: build and release.
    h.prepare(course, CHAPTER)
    instructor("release_assignment", CHAPTER)

    # Learner: fetch, answer one exercise of two, submit.
    learner("fetch_assignment", CHAPTER)
    fetched = home / CHAPTER / f"{CHAPTER}.ipynb"
    assert fetched.is_file()
    if multi_user:
        assert fetched.stat().st_uid == NOBODY
    nb = h.read_nb(fetched)
    nb = h.mutate(nb, "add", "    # YOUR CODE HERE\n    raise NotImplementedError()", "    return a + b")
    if multi_user:
        # Written as the learner, so the file's owner is theirs.
        subprocess.run([*SETPRIV, sys.executable, "-c",
                        f"import sys, nbformat; nbformat.write(nbformat.reads(sys.stdin.read(), 4), {str(fetched)!r})"],
                       input=__import__("nbformat").writes(nb), text=True, check=True, env=learner_env)
    else:
        h.write_nb(nb, fetched)
    learner("submit", CHAPTER)

    # Instructor: collect, grade, write and release feedback.
    instructor("collect", CHAPTER)
    assert (course / "submitted" / student / CHAPTER / f"{CHAPTER}.ipynb").is_file()
    instructor("autograde", CHAPTER, "--Execute.timeout=60")
    assert h.grades(course, CHAPTER, student) == {"add_test": (2, 2), "scale_test": (0, 3)}
    instructor("generate_feedback", CHAPTER)
    instructor("release_feedback", CHAPTER)

    # Learner: fetch the feedback; it shows the score and no hidden test code.
    learner("fetch_feedback", CHAPTER)
    feedback = sorted((home / CHAPTER / "feedback").glob(f"*/{CHAPTER}.html"))
    assert len(feedback) == 1, list((home / CHAPTER).rglob("*"))
    shown = unescape(re.sub(r"<[^>]+>", "", feedback[0].read_text()))
    assert re.search(r"Score:\s*2(\.0)?\s*/\s*5", shown), shown[:2000]
    assert "add(-5, 5)" not in shown and "hidden tests ran here" in shown
