"""Helpers for the tests that drive nbgrader: temporary courses, CLI runs, grades, submissions.

Every test works in a temporary copy of the course (nbgrader_config.py + chapter sources), so the
repository's gradebook.db, course/ and solutions/ are never touched. nbgrader runs as a subprocess
with cwd in that copy, the way an instructor runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_CHAPTER = "ch00_fixture"

sys.path.insert(0, str(REPO))
from autograder import build as aag_build  # noqa: E402
from autograder.grading.batch import NBGRADER  # noqa: E402


RUN_MODES = ("require", "auto", "off")


def run_mode(variable: str, env=os.environ) -> str:
    """How a test that needs machinery a laptop may lack runs, from ``variable`` (AAG_BROWSER_TEST,
    AAG_HUB_TEST): "require" (missing machinery fails it; the default where CI is set), "auto"
    (it skips, saying why; the default elsewhere) or "off"."""
    value = env.get(variable, "").strip().lower()
    if not value:
        return "require" if env.get("CI") else "auto"
    if value not in RUN_MODES:
        raise ValueError(f"{variable}={value!r}: expected one of {', '.join(RUN_MODES)}")
    return value


def log_tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a log file a test's server writes, for a failure message."""
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def real_chapters() -> list[str]:
    return aag_build.chapters_in(REPO)


def all_chapters() -> list[str]:
    """The course's chapters plus the pure-Python fixture (fast, and independent of the course)."""
    return real_chapters() + [FIXTURE_CHAPTER]


def chapter_source_dir(chapter: str) -> Path:
    if chapter == FIXTURE_CHAPTER:
        return FIXTURES / chapter
    return REPO / "source" / chapter


def make_course(root: Path, chapters) -> Path:
    """A course at ``root``: the repository's nbgrader_config.py and the chapters' text sources."""
    root = Path(root)
    (root / "source").mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    for chapter in chapters:
        shutil.copytree(chapter_source_dir(chapter), root / "source" / chapter,
                        ignore=shutil.ignore_patterns("*.ipynb", "__pycache__", ".ipynb_checkpoints"))
    return root


def sandbox_mode() -> str:
    """``require``, as CI and instructors grade; ``auto`` on a laptop without bubblewrap, so that
    the pipeline tests grade unsandboxed instead of failing (the sandbox's own tests say why they
    skip). An ``AAG_SANDBOX`` already set wins."""
    from autograder import sandbox
    if os.environ.get("AAG_SANDBOX"):
        return os.environ["AAG_SANDBOX"]
    return "auto" if sandbox.unavailable_reason() and not os.environ.get("CI") else "require"


def env(**extra) -> dict:
    """Environment for nbgrader subprocesses: this package importable, this venv's tools first
    (nbgrader's gradebook shells out to ``alembic``), the sandbox as :func:`sandbox_mode` says."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), e.get("PYTHONPATH")]))
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), e.get("PATH", "")])
    e["AAG_SANDBOX"] = sandbox_mode()
    e.update({k: str(v) for k, v in extra.items()})
    return e


def nbgrader(root: Path, *args, check=True, timeout=900, environ=None, user_cmd=()):
    """Run ``nbgrader ARGS`` in ``root``; fail the test with the log if it fails and ``check``."""
    cmd = [*user_cmd, *NBGRADER, *map(str, args)]
    p = subprocess.run(cmd, cwd=root, env=environ or env(), capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(map(str, args))} failed ({p.returncode}):\n"
                             f"{p.stdout[-5000:]}\n{p.stderr[-8000:]}")
    return p


def read_nb(path: Path):
    return nbformat.read(str(path), as_version=4)


def write_nb(nb, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def grade_cells(nb) -> dict:
    """grade_id -> points, for the test cells of a notebook."""
    out = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            out[meta["grade_id"]] = meta.get("points", 0)
    return out


def cell_by_id(nb, grade_id: str):
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(grade_id)


def grades(root: Path, chapter: str, student: str) -> dict:
    """grade_id -> (score, max_score) for one student's autograded notebook, from the gradebook."""
    from nbgrader.api import Gradebook

    aag_build.ensure_tools_on_path()  # the gradebook calls `alembic`
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(chapter, chapter, student)
        return {g.name: (g.score, g.max_score) for g in nb.grades if g.cell_type == "code"}


def manual_grades(root: Path, chapter: str, student: str) -> dict:
    """grade_id -> (score, needs_manual_grade) for the written answers (markdown grade cells)."""
    from nbgrader.api import Gradebook

    aag_build.ensure_tools_on_path()
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(chapter, chapter, student)
        return {g.name: (g.score, g.needs_manual_grade) for g in nb.grades
                if g.cell_type == "markdown"}


def submit(root: Path, chapter: str, student: str, nb) -> None:
    """Place a submission where ``nbgrader collect`` would: submitted/<student>/<chapter>/."""
    dest = Path(root) / "submitted" / student / chapter
    write_nb(nb, dest / f"{chapter}.ipynb")
    (dest / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")


def prepare(root: Path, chapter: str) -> None:
    """Build the intermediate notebook, then release and solution as an instructor would."""
    aag_build.convert_chapter(Path(root), chapter)
    nbgrader(root, "generate_assignment", chapter, "--force")
    nbgrader(root, "generate_solution", chapter, "--force")


def mutate(nb, grade_id: str, old: str, new: str):
    """A copy of ``nb`` with ``old`` replaced by ``new`` in one cell (which must contain it)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    cell = cell_by_id(nb, grade_id)
    assert old in cell.source, f"{grade_id!r} no longer contains {old!r}: update the mutation"
    cell.source = cell.source.replace(old, new, 1)
    return nb


def once(tmp_path_factory, key: str, make):
    """Run ``make(directory)`` once per test session, even under pytest-xdist, and share its result.

    Module fixtures run once per xdist worker: with ``-n 2``, each expensive autograde run would
    happen twice. The first worker to get here runs it in a directory shared by all workers (the
    parent of the per-worker temp roots); the others wait on the lock and reuse what it saved.
    ``make`` returns something JSON-serialisable.
    """
    import fcntl

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    directory = shared / key
    done = shared / f"{key}.json"
    with open(shared / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            result = json.loads(done.read_text())
            if "error" in result:
                raise AssertionError(f"{key} failed in another worker:\n{result['error']}")
            return result["value"]
        directory.mkdir(parents=True, exist_ok=True)
        try:
            value = make(directory)
        except BaseException as e:
            done.write_text(json.dumps({"error": f"{type(e).__name__}: {e}"}))
            raise
        done.write_text(json.dumps({"value": value}))
        return value
