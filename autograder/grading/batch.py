"""One submission graded anywhere: what a grading worker needs, and what it sends back.

``aag grade-all`` (:mod:`autograder.tools.grade_all`) fans a class's submissions out over Dask
workers, which may run on other machines with no view of the course folder. Each task gets:

* a :class:`CourseKit`, the same for every submission of the assignment: ``nbgrader_config.py``,
  the assignment's source files, a gradebook holding the assignment and no learner, the secret
  and the grading settings;
* one learner's submitted files (read from the exchange without following a link, within the
  judge's caps on files and bytes).

:func:`grade_submission` builds a private course from them in a temporary folder and runs
``nbgrader autograde`` there as a child process, exactly as the instructor would run it: the
sandboxed kernel, the judge, the speed tests. It returns an :class:`Outcome` with the autograded
notebooks and ``judge.json``; the instructor's machine then writes them into the real gradebook
through nbgrader's own code (:class:`~autograder.grading.nbgrader_ext.ReplayGrading`). A grading
run that fails or runs past its limit raises :class:`NotGraded`, which Dask retries once.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import spec
from autograder.machine import device, timing
from autograder.grading import safe_files

# What a submission folder may hold when it is sent to a worker: the judge's own caps.
MAX_FILES = safe_files.DEFAULT_MAX_FILES
MAX_BYTES = safe_files.DEFAULT_MAX_BYTES
# The grading settings a worker's nbgrader run takes from the instructor's environment.
SETTINGS_ENV = ("AAG_SANDBOX", spec.CHECK_TIMEOUT_ENV, spec.SPEED_WITHOUT_GPU_ENV,
                device.BACKEND_ENV, timing.SPEED_BARS_ENV)

# ``nbgrader ARGS`` as a command: nbgrader's own entry point, less the 2 s (of 4) its import spends
# in jsonschema building the grammar of an optional format checker (``rfc3987_syntax``, installed
# for jupyter-events) that nbgrader never uses; jsonschema goes on without it when it is absent.
NBGRADER = (sys.executable, "-c", "import sys; sys.modules.setdefault('rfc3987_syntax', None); "
            "from nbgrader.apps.nbgraderapp import main; sys.exit(main())")


class NotGraded(Exception):
    """A submission's grading run failed or ran past its limit (the message says which)."""


@dataclass(frozen=True)
class CourseKit:
    """Everything a worker needs to grade any submission of one assignment."""
    assignment: str
    config: str                          # nbgrader_config.py, as text
    source: dict[str, bytes]             # source/<assignment>/..., relative path -> bytes
    gradebook: bytes                     # gradebook.db with the assignment and no learner
    notebooks: tuple[str, ...]           # the assignment's notebooks (names without .ipynb)
    secret: str = field(repr=False, default="")
    nbgrader_args: tuple[str, ...] = ()  # e.g. --Execute.timeout=120
    env: dict[str, str] = field(default_factory=dict)   # SETTINGS_ENV values to pass on
    timeout: float = 1800.0              # wall-clock seconds one grading run may take


@dataclass
class Outcome:
    """A graded submission, as sent back to the instructor's machine."""
    student: str
    assignment: str
    files: dict[str, bytes]              # <notebook>.ipynb and judge.json, graded
    scores: dict[str, tuple[float, float]]   # grade cell -> (score, max score)
    seconds: float
    worker: str


def read_submission(folder: Path) -> dict[str, bytes]:
    """A submission folder's plain files, relative path -> bytes, read without following a link
    (links, FIFOs and devices are left out) and within :data:`MAX_FILES` and :data:`MAX_BYTES`
    (:class:`safe_files.CopyLimitExceeded` past them)."""
    with tempfile.TemporaryDirectory(prefix="aag-submission-") as tmp:
        copy = Path(tmp) / "copy"
        safe_files.copy_tree(folder, copy, max_files=MAX_FILES, max_bytes=MAX_BYTES, skip=())
        return {str(p.relative_to(copy)): p.read_bytes()
                for p in sorted(copy.rglob("*")) if p.is_file() and not p.is_symlink()}


def _write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = (root / rel).resolve()
        if root.resolve() not in path.parents:
            raise NotGraded(f"refusing a file outside the submission's folder: {rel!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _parent_death_signal():
    """A function for ``preexec_fn`` that asks Linux to kill the grading run if the worker
    process dies (``PR_SET_PDEATHSIG``), or None elsewhere. Resolved here, before the fork: the
    child only makes one C call (a Dask worker has threads, so the child must not import)."""
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGKILL)       # 1 = PR_SET_PDEATHSIG


def _worker_name() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return socket.gethostname()


def grade_submission(kit: CourseKit, student: str, files: dict[str, bytes]) -> Outcome:
    """Grade one learner's submission in a private copy of the course; raise :class:`NotGraded`
    if the grading run fails or runs past ``kit.timeout``."""
    from nbgrader.api import Gradebook, MissingEntry

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"aag-grade-{kit.assignment}-") as tmp:
        root = Path(tmp)
        (root / "nbgrader_config.py").write_text(kit.config)
        (root / "gradebook.db").write_bytes(kit.gradebook)
        _write_tree(root / "source" / kit.assignment, kit.source)
        _write_tree(root / "submitted" / student / kit.assignment, files)
        env = dict(os.environ)      # the worker's own settings (AAG_BWRAP, CUDA_VISIBLE_DEVICES)
        env.update(kit.env)         # and the instructor's grading settings
        env["AAG_SECRET_SEED"] = kit.secret   # nbgrader_config.py takes it out of the environment
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        cmd = [*NBGRADER, "autograde", kit.assignment, f"--student={student}",
               "--force", *kit.nbgrader_args]
        # Its own session, so the whole run (kernel, judge, sandbox) can be stopped at once.
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                preexec_fn=_parent_death_signal())
        try:
            log, _ = proc.communicate(timeout=kit.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise NotGraded(f"its grading ran past {kit.timeout:g} s and was stopped") from None
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.returncode != 0:
            tail = "\n".join(log.strip().splitlines()[-15:])
            raise NotGraded(f"nbgrader autograde failed (exit {proc.returncode}):\n{tail}")
        graded = root / "autograded" / student / kit.assignment
        out: dict[str, bytes] = {}
        for name in [f"{n}.ipynb" for n in kit.notebooks] + ["judge.json"]:
            # the judge removed every link there; read without following one all the same
            data = safe_files.read_file(graded / name)
            if data is not None:
                out[name] = data
        scores: dict[str, tuple[float, float]] = {}
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            for notebook in kit.notebooks:
                try:
                    nb = gb.find_submission_notebook(notebook, kit.assignment, student)
                except MissingEntry:
                    raise NotGraded(f"nbgrader wrote no grades for {notebook}") from None
                scores.update({g.name: (float(g.score), float(g.max_score)) for g in nb.grades})
    return Outcome(student=student, assignment=kit.assignment, files=out, scores=scores,
                   seconds=time.monotonic() - start, worker=_worker_name())


def empty_gradebook(db: Path, dest: Path) -> bytes:
    """A copy of the gradebook ``db`` without any learner (their submissions go with them), as
    bytes: what every worker starts from."""
    import sqlite3

    from nbgrader.api import Gradebook

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as src, sqlite3.connect(dest) as copy:
        src.backup(copy)
    with Gradebook(f"sqlite:///{dest}") as gb:
        for s in list(gb.students):
            gb.remove_student(s.id)
    return dest.read_bytes()

