"""An instructor's class, from an empty exchange to exported grades: ``aag course init``,
``aag release``, ``aag collect``, ``aag feedback``, ``aag export``.

    aag course init --course-id ID [--exchange DIR] [--students ROSTER.csv] [--student-env DIR]
    aag release ASSIGNMENT [--due "2026-12-15 23:59 UTC"]
    aag collect ASSIGNMENT
    aag feedback ASSIGNMENT
    aag export [--to grades.csv]

Each runs in the course folder (where ``nbgrader_config.py`` is; ``--course`` says another) and
can be run again: a second run changes only what changed. They are nbgrader's own commands in the
order a class needs them, with the steps people forget done for them:

* ``course init`` keeps the course id and the exchange in ``.aag/course.json`` (nbgrader_config.py
  reads it), makes the exchange with the modes nbgrader needs (``1777``), adds the learners of a
  roster with their names, and can build the learners' environment: a virtual environment outside
  any home folder, with the course installed and the class's settings (course id, exchange,
  formgrader off), that every learner's account can run.
* ``release`` builds the chapter, puts it into the gradebook (``generate_assignment --force``),
  sets its due date and releases it; run again, it releases only if the notebooks changed.
* ``collect`` takes new and resubmitted work (``collect --update``) and says who was late.
* ``feedback`` generates and releases every graded learner's feedback.
* ``export`` writes the grades (one column per exercise) readable by you only.

Autograding is ``aag grade-all ASSIGNMENT`` (or ``nbgrader autograde``) between collect and feedback.
"""

from __future__ import annotations

import argparse
import csv
import filecmp
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

SETTINGS = Path(".aag") / "course.json"
DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"
# nbgrader's course ids end up in paths of the exchange: keep them plain.
_COURSE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# The GPU extras of the instructor's environment, passed on to the learners' (the stamp that
# ./aag writes after installing: "<hash> [dev,cuda13,hub]").
_GPU_EXTRAS = ("cuda12", "cuda13", "hip")


class CourseError(Exception):
    """Something the instructor must fix; the message says what and how."""


# --- the course folder and its settings ----------------------------------------------------------

def course_folder(path: Path | None) -> Path:
    course = (path or Path.cwd()).resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise CourseError(f"{course} is not a course folder (no nbgrader_config.py): run this in "
                          "your clone of the course, or pass --course")
    return course


def read_settings(course: Path) -> dict:
    try:
        return json.loads((course / SETTINGS).read_text())
    except (OSError, ValueError):
        return {}


def write_settings(course: Path, settings: dict) -> None:
    folder = course / SETTINGS.parent
    folder.mkdir(mode=0o700, exist_ok=True)
    tmp = folder / "course.json.tmp"
    tmp.write_text(json.dumps(settings, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, course / SETTINGS)


def _class_settings(course: Path) -> dict:
    settings = read_settings(course)
    if not settings.get("course_id"):
        raise CourseError("no course id yet: run `aag course init --course-id ID --exchange DIR` "
                          "first (once per class)")
    return settings


def open_gradebook(course: Path):
    """nbgrader's gradebook of ``course`` (made when missing)."""
    from nbgrader.api import Gradebook

    from autograder.tools.build import ensure_tools_on_path
    ensure_tools_on_path()             # nbgrader's gradebook runs `alembic`
    return Gradebook(f"sqlite:///{course / 'gradebook.db'}")


def nbgrader(course: Path, *args: str) -> None:
    """``nbgrader ARGS`` in the course folder, its output shown; a failure raises CourseError."""
    from autograder.grading.batch import NBGRADER
    from autograder.tools.build import ensure_tools_on_path

    ensure_tools_on_path()
    print(f"aag: nbgrader {' '.join(args)}", flush=True)
    rc = subprocess.call([*NBGRADER, *args], cwd=course)
    if rc:
        raise CourseError(f"nbgrader {args[0]} failed (exit {rc}); its messages are above")


# --- course init ---------------------------------------------------------------------------------

def others_can_reach(path: Path) -> bool:
    """Whether a user who is neither the owner nor in the group can reach ``path`` (each folder
    above it searchable by others; the path readable, and searchable if a folder)."""
    path = Path(path).resolve()
    try:
        if any(not os.stat(parent).st_mode & 0o001 for parent in path.parents):
            return False
        mode = os.stat(path).st_mode
    except OSError:
        return False
    need = 0o005 if path.is_dir() else 0o004
    return mode & need == need


def make_exchange(exchange: Path) -> str:
    """The exchange folder, everyone's to write with the sticky bit (nbgrader's ``1777``)."""
    if not exchange.exists():
        try:
            exchange.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            exchange.mkdir()
            exchange.chmod(0o1777)
        except OSError as exc:
            raise CourseError(f"cannot make the exchange {exchange} ({exc.strerror}): make it once "
                              f"as root, `install -d -m 1777 {exchange}`, then run this "
                              "again") from None
        return f"made the exchange {exchange} (mode 1777)"
    if not exchange.is_dir():
        raise CourseError(f"the exchange {exchange} is not a folder")
    mode = exchange.stat().st_mode & 0o7777
    if mode & 0o1777 != 0o1777:
        if exchange.stat().st_uid != os.geteuid():
            raise CourseError(f"the exchange {exchange} has mode {mode:o}; learners need 1777 "
                              f"(as root: chmod 1777 {exchange})")
        exchange.chmod(0o1777)
        return f"set the exchange {exchange} to mode 1777 (it was {mode:o})"
    if not others_can_reach(exchange):
        raise CourseError(f"learners cannot reach the exchange {exchange}: a folder above it is "
                          "closed to other users; choose one outside any home folder")
    return f"the exchange {exchange} is ready"


def read_roster(path: Path) -> list[dict]:
    """The learners of a CSV roster with nbgrader's columns: ``id`` (the learner's user name)
    and, optionally, ``first_name``, ``last_name``, ``email``."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise CourseError(f"cannot read the roster {path}: {exc.strerror}") from None
    if not rows or "id" not in rows[0]:
        raise CourseError(f"the roster {path} needs a header line with an `id` column (and "
                          "optionally first_name, last_name, email)")
    learners, seen = [], set()
    for line, row in enumerate(rows, start=2):
        learner = (row.get("id") or "").strip()
        if not learner:
            raise CourseError(f"{path}, line {line}: no id")
        if learner in seen:
            raise CourseError(f"{path}, line {line}: {learner} is listed twice")
        seen.add(learner)
        learners.append({"id": learner, **{k: (row.get(k) or "").strip() or None
                                           for k in ("first_name", "last_name", "email")}})
    return learners


def add_learners(course: Path, learners: list[dict]) -> str:
    with open_gradebook(course) as gb:
        for learner in learners:
            gb.update_or_create_student(learner["id"], **{k: v for k, v in learner.items()
                                                           if k != "id"})
    unknown = []
    try:
        import pwd
        for learner in learners:
            try:
                pwd.getpwnam(learner["id"])
            except KeyError:
                unknown.append(learner["id"])
    except ImportError:
        pass
    note = (f"; not accounts on this machine (fine if they work on a hub elsewhere): "
            f"{', '.join(unknown)}" if unknown else "")
    return f"{len(learners)} learners in the gradebook{note}"


def shared_python(asked: str | None = None) -> str:
    """A Python >= 3.11 that every user can run (its installation outside any closed folder) and
    that can make virtual environments."""
    candidates = [asked] if asked else [
        getattr(sys, "_base_executable", None), "python3", "python3.13", "python3.12", "python3.11",
        "/usr/bin/python3", "/usr/local/bin/python3"]
    tried = []
    for candidate in filter(None, candidates):
        exe = shutil.which(candidate)
        if exe is None:
            tried.append(f"{candidate}: not found")
            continue
        probe = subprocess.run(
            [exe, "-c", "import sys, venv, ensurepip; print(sys.prefix); "
             "print(sys.version_info >= (3, 11))"], capture_output=True, text=True)
        lines = probe.stdout.split()
        if probe.returncode or len(lines) != 2:
            tried.append(f"{exe}: no venv/ensurepip")
            continue
        prefix, recent = Path(lines[0]), lines[1] == "True"
        if not recent:
            tried.append(f"{exe}: older than 3.11")
        elif not (others_can_reach(Path(exe).resolve()) and others_can_reach(prefix)):
            tried.append(f"{exe}: inside a folder other users cannot reach ({prefix})")
        else:
            return exe
        if asked:
            break
    raise CourseError("no Python >= 3.11 that every user can run, for the learners' environment "
                      f"({'; '.join(tried)}). Install one (Debian: apt-get install python3 "
                      "python3-venv) or name it with --python")


def _gpu_extras() -> list[str]:
    stamp = Path(sys.prefix) / ".aag-installed"
    try:
        extras = stamp.read_text().split("[", 1)[1].split("]", 1)[0].split(",")
    except (OSError, IndexError):
        return []
    return [e for e in extras if e in _GPU_EXTRAS]


def learner_config(course_id: str, exchange: str) -> dict[str, str]:
    """The files the learners' environment gets under ``etc/jupyter`` (Jupyter reads that folder
    of the environment it runs from): the class's nbgrader settings, and formgrader and the
    instructor's menus turned off."""
    return {
        "nbgrader_config.py": (
            "# Written by `aag course init`: the class the learners of this environment fetch\n"
            "# from and submit to.\n"
            "c = get_config()  # noqa: F821\n"
            f"c.CourseDirectory.course_id = {course_id!r}\n"
            f"c.Exchange.root = {exchange!r}\n"),
        # read after nbgrader's own nbgrader.json in the same folder, so these win
        "jupyter_server_config.d/nbgrader_learners.json": json.dumps({"ServerApp": {
            "jpserver_extensions": {"nbgrader.server_extensions.formgrader": False,
                                    "nbgrader.server_extensions.assignment_list": True,
                                    "nbgrader.server_extensions.course_list": True,
                                    "nbgrader.server_extensions.validate_assignment": True}}},
            indent=1) + "\n",
        "labconfig/page_config.json": json.dumps({"disabledExtensions": {
            "@jupyter/nbgrader:formgrader": True,
            "@jupyter/nbgrader:create-assignment": True}}, indent=1) + "\n",
    }


INSTALLED_STAMP = ".aag-course-installed"   # in the learners' environment: what it was made from


def course_digest(repo: Path) -> str:
    """A digest of what installing the course copies into an environment: ``pyproject.toml`` and
    every file of the package (its data included), by path and content."""
    digest = hashlib.sha256()
    files = [repo / "pyproject.toml", *sorted(
        p for p in (repo / "autograder").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")]
    for path in files:
        digest.update(path.relative_to(repo).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def make_learner_env(env: Path, course_id: str, exchange: str, python: str | None = None) -> str:
    """A virtual environment at ``env`` that every learner's account can run: the course installed
    into it (a copy, not a link into this clone, which may sit in a closed home folder) with the
    instructor's GPU extras, and the class's Jupyter settings."""
    repo = Path(__file__).resolve().parents[2]
    if not (repo / "pyproject.toml").is_file():
        raise CourseError(f"the course's sources are not beside this package ({repo}): run "
                          "`./aag course init` from a clone of the course")
    old_umask = os.umask(0o022)          # what is installed must be readable by every user
    try:
        if not (env / "bin" / "python").exists():
            exe = shared_python(python)
            print(f"aag: making the learners' environment {env} with {exe}", flush=True)
            try:
                env.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CourseError(f"cannot make {env} ({exc.strerror}): make its folder as root "
                                  "and give it to yourself, or choose another place") from None
            if subprocess.call([exe, "-m", "venv", str(env)]):
                raise CourseError(f"{exe} -m venv {env} failed (see above)")
        extras = _gpu_extras()
        target = f"{repo}[{','.join(extras)}]" if extras else str(repo)
        stamp, want = env / INSTALLED_STAMP, f"{course_digest(repo)} [{','.join(extras)}]\n"
        if stamp.is_file() and stamp.read_text() == want:
            print(f"aag: the course in {env} is up to date (installed from these sources, with "
                  "these extras); nothing to install", flush=True)
        else:
            print(f"aag: installing the course into {env} ({target}); the first time takes a "
                  "minute or more", flush=True)
            stamp.unlink(missing_ok=True)
            if subprocess.call([str(env / "bin" / "python"), "-m", "pip", "install",
                                "--disable-pip-version-check", "--quiet", target]):
                raise CourseError(f"installing the course into {env} failed (see above)")
            stamp.write_text(want)
        for name, text in learner_config(course_id, exchange).items():
            path = env / "etc" / "jupyter" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    finally:
        os.umask(old_umask)
    if not others_can_reach(env / "bin" / "python"):
        raise CourseError(f"learners cannot run {env}/bin/python: a folder above {env} is closed "
                          "to other users; choose a place outside any home folder (/opt/...)")
    return f"the learners' environment {env} is ready: learners run {env}/bin/jupyter lab"


def cmd_init(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="aag course init", description=(
        "Set up a class: its course id and exchange (kept in .aag/course.json, read by "
        "nbgrader_config.py), the learners of a roster, and the learners' environment."))
    p.add_argument("--course-id", help="the class's id in nbgrader's exchange (e.g. gpu101); "
                   "required the first time")
    p.add_argument("--exchange", type=Path, help=f"nbgrader's exchange folder, shared by every "
                   f"user (default: {DEFAULT_EXCHANGE}); made with mode 1777 when missing")
    p.add_argument("--students", type=Path, metavar="ROSTER.csv", help="learners to add or "
                   "update: a CSV with an id column (user names) and first_name, last_name, email")
    p.add_argument("--student-env", type=Path, metavar="DIR", help="make (or update) the "
                   "learners' environment here: outside any home folder, e.g. /opt/gpu101")
    p.add_argument("--python", help="the Python to build the learners' environment with "
                   "(default: the first >= 3.11 that every user can run)")
    p.add_argument("--course", type=Path, help="the course folder (default: here)")
    args = p.parse_args(argv)
    course = course_folder(args.course)
    settings = read_settings(course)
    course_id = args.course_id or settings.get("course_id")
    if not course_id:
        raise CourseError("the first `aag course init` needs --course-id (e.g. --course-id gpu101)")
    if not _COURSE_ID.match(course_id):
        raise CourseError(f"course id {course_id!r}: use letters, digits, '-', '_' and '.' only")
    exchange = Path(args.exchange or settings.get("exchange") or DEFAULT_EXCHANGE).absolute()
    env = args.student_env.absolute() if args.student_env else settings.get("student_env")
    print(f"aag: {make_exchange(exchange)}")
    settings.update(course_id=course_id, exchange=str(exchange))
    if env:
        settings["student_env"] = str(env)
    write_settings(course, settings)
    print(f"aag: class {course_id}, exchange {exchange} (in {SETTINGS})")
    if args.students:
        print(f"aag: {add_learners(course, read_roster(args.students))}")
    else:
        with open_gradebook(course):
            pass                          # the gradebook exists from now on
    if args.student_env:
        print(f"aag: {make_learner_env(Path(env), course_id, str(exchange), args.python)}")
    return 0


# --- release, collect, feedback, export --------------------------------------------------------

def _same_tree(a: Path, b: Path) -> bool:
    files = lambda base: {p.relative_to(base) for p in base.rglob("*") if p.is_file()}  # noqa: E731
    if not (a.is_dir() and b.is_dir()) or files(a) != files(b):
        return False
    return all(filecmp.cmp(a / f, b / f, shallow=False) for f in files(a))


def parse_due(text: str):
    """A due date as nbgrader reads it (UTC unless the text names a zone), e.g.
    "2026-12-15 23:59", "2026-12-15 23:59 Europe/Paris", "2026-12-15T23:59:00+01:00"."""
    from nbgrader.utils import parse_utc
    try:
        return parse_utc(text)
    except (ValueError, OverflowError):
        raise CourseError(f"cannot read the due date {text!r} (e.g. \"2026-12-15 23:59 UTC\")") from None


def cmd_release(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="aag release", description=(
        "Build ASSIGNMENT, put it into the gradebook, set its due date and release it to the "
        "exchange. Run again to change the due date or release an updated chapter."))
    p.add_argument("assignment")
    p.add_argument("--due", help='due date, UTC unless a zone is named ("2026-12-15 23:59 UTC"); '
                   "late work loses points (nbgrader_config.py: c.LatePenalty)")
    p.add_argument("--course", type=Path, help="the course folder (default: here)")
    args = p.parse_args(argv)
    course = course_folder(args.course)
    settings = _class_settings(course)
    due = parse_due(args.due) if args.due else None
    name = args.assignment
    from autograder.tools import build
    if (course / "source" / name / f"{name}.py").is_file():
        build.convert_chapter(course, name)
    elif not (course / "source" / name / f"{name}.ipynb").is_file():
        raise CourseError(f"no assignment {name} in {course / 'source'}")
    nbgrader(course, "generate_assignment", name, "--force")
    with open_gradebook(course) as gb:
        assignment = gb.update_or_create_assignment(name, **({"duedate": due} if due else {}))
        due = assignment.duedate
    released = Path(settings["exchange"]) / settings["course_id"] / "outbound" / name
    if _same_tree(course / "course" / name, released):
        print(f"aag: {name} is released already, unchanged")
    else:
        nbgrader(course, "release_assignment", name, *(["--force"] if released.exists() else []))
    print(f"aag: {name} is out; due {due:%Y-%m-%d %H:%M} UTC" if due else
          f"aag: {name} is out, with no due date (set one: aag release {name} --due ...)")
    return 0


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def lateness(course: Path, name: str) -> list[str]:
    """One line per collected submission: the learner, and how late it is."""
    from nbgrader.utils import parse_utc
    with open_gradebook(course) as gb:
        try:
            due = gb.find_assignment(name).duedate
        except Exception:
            due = None
        names = {s.id: " ".join(filter(None, [s.first_name, s.last_name])) for s in gb.students}
    lines = []
    for folder in sorted((course / "submitted").glob(f"*/{name}")):
        learner = folder.parent.name
        try:
            stamp = parse_utc((folder / "timestamp.txt").read_text().strip())
        except (OSError, ValueError):
            stamp = None
        late = (stamp - due).total_seconds() if stamp and due else 0
        when = f"late by {_duration(late)}" if late > 0 else "on time"
        who = f"{learner} ({names[learner]})" if names.get(learner) else learner
        lines.append(f"{who}: {when}")
    return lines


def _class_step(prog: str, description: str, argv: Sequence[str]) -> tuple[Path, str]:
    """The course folder (set up by course init) and the assignment of ``aag collect|feedback``."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("assignment")
    p.add_argument("--course", type=Path, help="the course folder (default: here)")
    args = p.parse_args(argv)
    course = course_folder(args.course)
    _class_settings(course)
    return course, args.assignment


def cmd_collect(argv: Sequence[str]) -> int:
    course, name = _class_step("aag collect", (
        "Collect ASSIGNMENT's submissions from the exchange, new ones and resubmissions "
        "(nbgrader collect --update); then autograde with aag grade-all ASSIGNMENT."), argv)
    nbgrader(course, "collect", name, "--update")
    lines = lateness(course, name)
    print(f"aag: {len(lines)} submissions of {name}" + "".join(f"\n  {l}" for l in lines))
    return 0


def cmd_feedback(argv: Sequence[str]) -> int:
    course, name = _class_step("aag feedback", (
        "Make every graded learner's feedback page for ASSIGNMENT (hidden tests' code left out) "
        "and release it to the exchange, where learners fetch it."), argv)
    nbgrader(course, "generate_feedback", name, "--force")
    nbgrader(course, "release_feedback", name)
    return 0


def cmd_export(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="aag export", description=(
        "Write the gradebook's grades as CSV: nbgrader's columns (late penalty included), then "
        "one column per graded cell. The file is readable by you only."))
    p.add_argument("--to", type=Path, default=Path("grades.csv"),
                   help="the CSV file (default: grades.csv in the course folder, which git ignores)")
    p.add_argument("--course", type=Path, help="the course folder (default: here)")
    args = p.parse_args(argv)
    course = course_folder(args.course)
    out = args.to if args.to.is_absolute() else course / args.to
    nbgrader(course, "export", f"--to={out}")
    out.chmod(0o600)
    print(f"aag: grades in {out}")
    return 0


COMMANDS = {"course": {"init": cmd_init}, "release": cmd_release, "collect": cmd_collect,
            "feedback": cmd_feedback, "export": cmd_export}


def run(command: str, argv: Sequence[str]) -> int:
    """``aag COMMAND ARGV`` for the commands of this module."""
    handler = COMMANDS[command]
    try:
        if isinstance(handler, dict):
            if not argv or argv[0] not in handler:
                print(f"usage: aag {command} {{{','.join(handler)}}} ...", file=sys.stderr)
                return 2
            return handler[argv[0]](list(argv[1:]))
        return handler(list(argv))
    except CourseError as exc:
        print(f"aag {command}: {exc}", file=sys.stderr)
        return 1
