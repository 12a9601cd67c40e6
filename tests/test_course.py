"""autograder.tools.course's pieces, without Unix users (tests/test_instructor.py runs the whole)."""

from __future__ import annotations

import datetime
import os

import pytest

from autograder.tools import course


def test_a_roster_is_read_with_names_and_its_mistakes_are_named(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nana,Ana,Lima,ana@x.org\nben,,Okoro,\n")
    assert course.read_roster(roster) == [
        {"id": "ana", "first_name": "Ana", "last_name": "Lima", "email": "ana@x.org"},
        {"id": "ben", "first_name": None, "last_name": "Okoro", "email": None}]
    roster.write_text("name,email\nana,a@x\n")
    with pytest.raises(course.CourseError, match="`id` column"):
        course.read_roster(roster)
    roster.write_text("id\nana\nana\n")
    with pytest.raises(course.CourseError, match="line 3: ana is listed twice"):
        course.read_roster(roster)
    with pytest.raises(course.CourseError, match="cannot read the roster"):
        course.read_roster(tmp_path / "missing.csv")


def test_the_exchange_is_made_or_fixed_with_the_mode_nbgrader_needs(tmp_path):
    exchange = tmp_path / "srv" / "exchange"
    assert "made the exchange" in course.make_exchange(exchange)
    assert exchange.stat().st_mode & 0o7777 == 0o1777
    exchange.chmod(0o755)
    assert "set the exchange" in course.make_exchange(exchange)
    assert exchange.stat().st_mode & 0o7777 == 0o1777
    (tmp_path / "file").write_text("")
    with pytest.raises(course.CourseError, match="not a folder"):
        course.make_exchange(tmp_path / "file")


def test_due_dates_read_as_nbgrader_reads_them():
    assert course.parse_due("2026-12-15 23:59") == datetime.datetime(2026, 12, 15, 23, 59)
    assert course.parse_due("2026-12-15 23:59 UTC") == datetime.datetime(2026, 12, 15, 23, 59)
    assert course.parse_due("2026-12-16 00:59:00+01:00") == datetime.datetime(2026, 12, 15, 23, 59)
    with pytest.raises(course.CourseError, match="cannot read the due date"):
        course.parse_due("next friday-ish")


def test_the_learners_environment_gets_the_class_and_no_formgrader():
    files = course.learner_config("gpu101", "/srv/nbgrader/exchange")
    config = {}
    exec(files["nbgrader_config.py"], {"get_config": lambda: _Config(config)})
    assert config == {"CourseDirectory.course_id": "gpu101",
                      "Exchange.root": "/srv/nbgrader/exchange"}
    assert '"nbgrader.server_extensions.formgrader": false' in \
        files["jupyter_server_config.d/nbgrader_learners.json"]
    assert "@jupyter/nbgrader:formgrader" in files["labconfig/page_config.json"]


class _Config:
    """Records ``c.Section.name = value`` as "Section.name"."""

    def __init__(self, into, prefix=""):
        object.__setattr__(self, "_into", into)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        return _Config(self._into, f"{self._prefix}{name}.")

    def __setattr__(self, name, value):
        self._into[f"{self._prefix}{name}"] = value


def test_a_python_nobody_else_can_run_is_refused_saying_why(tmp_path):
    with pytest.raises(course.CourseError, match="not found"):
        course.shared_python(str(tmp_path / "no-python"))


def test_commands_need_a_course_folder_and_a_class(tmp_path, capsys):
    assert course.run("release", ["ch02_data_parallel", "--course", str(tmp_path)]) == 1
    assert "not a course folder" in capsys.readouterr().err
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    assert course.run("collect", ["ch02_data_parallel", "--course", str(tmp_path)]) == 1
    assert "aag course init --course-id" in capsys.readouterr().err
    assert course.run("course", ["init", "--course", str(tmp_path)]) == 1
    assert "needs --course-id" in capsys.readouterr().err
    assert course.run("course", ["init", "--course-id", "a b", "--course", str(tmp_path)]) == 1
    assert "letters, digits" in capsys.readouterr().err


def test_lateness_reads_in_plain_units():
    assert course._duration(0.4) == "0.4 s"
    assert course._duration(90) == "1.5 min"
    assert course._duration(3 * 3600) == "3.0 h"
    assert course._duration(2.5 * 86400) == "2.5 days"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_exchange_that_cannot_be_made_says_how(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    with pytest.raises(course.CourseError, match="install -d -m 1777"):
        course.make_exchange(locked / "exchange")


def test_the_learners_environment_is_installed_again_only_when_the_course_changed(
        tmp_path, monkeypatch, capsys):
    """`course init --student-env` run again (an instructor's second class, or their update of
    the course) reinstalls only when the package's sources or the extras differ from the last
    successful install; a failed install leaves no stamp, so the next run tries again."""
    env = tmp_path / "opt" / "gpu101"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("")
    tmp_path.chmod(0o755)
    installs, fail = [], []
    monkeypatch.setattr(course.subprocess, "call",
                        lambda cmd, **kw: installs.append(cmd) or (1 if fail else 0))
    monkeypatch.setattr(course, "others_can_reach", lambda path: True)
    digest, extras = ["sources-1"], [[]]          # no GPU extras first, whatever this venv has
    monkeypatch.setattr(course, "course_digest", lambda repo: digest[0])
    monkeypatch.setattr(course, "_gpu_extras", lambda: extras[0])
    course.make_learner_env(env, "gpu101", str(tmp_path / "exchange"))
    course.make_learner_env(env, "gpu101", str(tmp_path / "exchange"))
    assert len(installs) == 1 and "up to date" in capsys.readouterr().out
    digest[0] = "sources-2"                       # the course changed: install again
    course.make_learner_env(env, "gpu101", str(tmp_path / "exchange"))
    assert len(installs) == 2
    extras[0] = ["cuda13"]                        # other extras: again
    course.make_learner_env(env, "gpu101", str(tmp_path / "exchange"))
    assert len(installs) == 3 and installs[-1][-1].endswith("[cuda13]")
    digest[0], fail[:] = "sources-3", [True]      # a failed install: no stamp left behind
    with pytest.raises(course.CourseError, match="failed"):
        course.make_learner_env(env, "gpu101", str(tmp_path / "exchange"))
    fail.clear()
    course.make_learner_env(env, "gpu101", str(tmp_path / "exchange"))
    assert len(installs) == 5
    assert (env / "etc" / "jupyter").is_dir()     # the class's settings, written every time


def test_the_course_digest_follows_the_package_files(tmp_path):
    (tmp_path / "autograder" / "data").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "autograder" / "a.py").write_text("x = 1\n")
    first = course.course_digest(tmp_path)
    (tmp_path / "autograder" / "__pycache__").mkdir()
    (tmp_path / "autograder" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert course.course_digest(tmp_path) == first            # compiled files do not count
    (tmp_path / "autograder" / "data" / "b.json").write_text("{}")
    second = course.course_digest(tmp_path)
    assert second != first                                    # a new data file does
    (tmp_path / "autograder" / "a.py").write_text("x = 2\n")
    assert course.course_digest(tmp_path) != second           # so does an edit
