"""``aag grade-all ASSIGNMENT``: autograde a whole class at once, on Dask.

Run it in the course folder (where ``nbgrader_config.py`` and ``gradebook.db`` are), after
``nbgrader collect``::

    aag grade-all ch02_data_parallel                          # this machine: one worker per GPU
    aag grade-all ch02_data_parallel --scheduler tcp://head:8786   # workers on other machines

Every submission of the assignment that is not graded yet becomes one Dask task. A task runs
``nbgrader autograde`` for that learner in a private copy of the course on a worker
(:func:`autograder.grading.batch.grade_submission`): sandboxed kernel, judge, speed tests, as a
serial autograde. Its result comes back to this process, the only one that writes
``gradebook.db`` (sqlite has one writer): nbgrader's own autograde runs again here for that
learner, with :class:`~autograder.grading.nbgrader_ext.ReplayGrading` putting the worker's graded
cells in place of the execution, so the gradebook gets exactly what a serial autograde writes.

* **GPUs.** On this machine each GPU gets one worker, pinned to it (``CUDA_VISIBLE_DEVICES``) and
  offering the resource ``GPU=1``; an assignment with speed cells asks for ``GPU=1``, so two speed
  tests never share a GPU. ``--workers N`` adds CPU-only workers, which grade assignments without
  speed cells. With no GPU at all, every worker grades in CPU mode.
* **Faults.** A grading run that fails or runs past ``--timeout`` is retried once on another
  try; a worker that dies (killed, out of memory, a crash) has its task moved to another worker,
  once. After that the submission is reported "not graded: ..." and the others are unaffected.
* **Idempotent.** A submission is graded again only if it changed since it was graded (its
  ``timestamp.txt``) or with ``--force``; so after a failure, running the command again grades
  only what is missing.
* **Progress.** The Dask dashboard's address, then a line per finished submission; a report in
  ``.aag/grade-all/<assignment>.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from autograder.grading import batch, safe_files
from autograder.tools.course import open_gradebook

REPORT_DIR = Path(".aag") / "grade-all"


@dataclass
class Submission:
    student: str
    folder: Path


def _load_config(course: Path):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()


def submissions(course: Path, assignment: str, notebooks: list[str], force: bool,
                only: set[str] | None = None) -> tuple[list[Submission], list[str]]:
    """(to grade, already graded) among ``submitted/*/<assignment>``. Already graded: the
    gradebook has the submission, the autograded folder has every notebook, and its
    ``timestamp.txt`` is the submitted one (a learner who submitted again is graded again)."""
    todo, done = [], []
    base = course / "submitted"
    if not base.is_dir():
        return todo, done
    with open_gradebook(course) as gb:
        for student_dir in sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink()):
            folder = student_dir / assignment
            if not folder.is_dir() or folder.is_symlink():
                continue
            student = student_dir.name
            if only is not None and student not in only:
                continue
            graded = course / "autograded" / student / assignment
            try:
                gb.find_submission(assignment, student)
                in_gradebook = True
            except Exception:
                in_gradebook = False
            if (not force and in_gradebook
                    and all((graded / f"{n}.ipynb").is_file() for n in notebooks)
                    and safe_files.read_file(graded / "timestamp.txt")
                    == safe_files.read_file(folder / "timestamp.txt")):
                done.append(student)
            else:
                todo.append(Submission(student, folder))
    return todo, done


def speed_deferred(course: Path, assignment: str, student: str) -> bool:
    """Whether a graded submission's speed cells were left for a GPU (speed_without_gpu "defer")."""
    try:
        report = json.loads(safe_files.read_file(
            course / "autograded" / student / assignment / "judge.json") or b"{}")
    except (OSError, ValueError, safe_files.UnsafeFile):
        return False
    return any(isinstance(r, dict) and r.get("details", {}).get("speed_deferred")
               for r in report.values())


def make_kit(course: Path, assignment: str, config, scratch: Path, nbgrader_args=(),
             timeout: float = 1800.0) -> tuple[batch.CourseKit, bool]:
    """The assignment's :class:`~autograder.grading.batch.CourseKit`, and whether it has speed
    cells (named ``<exercise>_speed`` in every chapter): those want a GPU to themselves."""
    with open_gradebook(course) as gb:
        found = gb.find_assignment(assignment)
        notebooks = tuple(nb.name for nb in found.notebooks)
        speed = any(cell.name.endswith("_speed") for nb in found.notebooks for cell in nb.grade_cells)
    env = {k: os.environ[k] for k in batch.SETTINGS_ENV if k in os.environ}
    kit = batch.CourseKit(
        assignment=assignment, config=(course / "nbgrader_config.py").read_text(),
        source=batch.read_submission(course / "source" / assignment),
        gradebook=batch.empty_gradebook(course / "gradebook.db", scratch / "empty.db"),
        notebooks=notebooks, secret=config.JudgeSubmission.get("secret_seed", ""),
        nbgrader_args=tuple(nbgrader_args), env=env, timeout=timeout)
    return kit, speed


def replay_config(config, results_dir: Path):
    """The course's nbgrader config with the execution steps (``ExecuteGuarded``,
    ``JudgeSubmission``, nbgrader's ``Execute``) replaced by one ``ReplayGrading`` step."""
    from nbgrader.converters import Autograde
    from traitlets.config import Config

    from autograder.grading.nbgrader_ext import ReplayGrading

    steps = list(config.Autograde.get("autograde_preprocessors")
                 or Autograde.autograde_preprocessors.default_value)
    executing = {"ExecuteGuarded", "JudgeSubmission", "Execute"}
    first = next(k for k, s in enumerate(steps) if _name(s) in executing)
    steps = [s for s in steps if _name(s) not in executing]
    steps.insert(first, ReplayGrading)
    replay = Config(config)
    replay.Autograde.autograde_preprocessors = steps
    replay.ReplayGrading.results_dir = str(results_dir)
    return replay


def _name(step) -> str:
    return step if isinstance(step, str) else step.__name__


class Writer:
    """The one process that writes the gradebook: records each worker's graded submission through
    nbgrader's own autograde (with :func:`replay_config`)."""

    def __init__(self, course: Path, assignment: str, config):
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        self.assignment = assignment
        self.staging = course / REPORT_DIR / f"staging-{assignment}"
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging.mkdir(parents=True, mode=0o700)
        replay = replay_config(config, self.staging)
        replay.CourseDirectory.root = str(course)
        self.api = NbGraderAPI(CourseDirectory(config=replay), config=replay)

    def record(self, outcome: batch.Outcome) -> None:
        """Write one graded submission into the gradebook (and its autograded folder)."""
        folder = self.staging / outcome.student / self.assignment
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in outcome.files.items():
            safe_files.write_file(folder, name, data)
        try:
            with warnings.catch_warnings():   # nbgrader's gradebook on SQLAlchemy 2 warns, harmlessly
                warnings.simplefilter("ignore", category=Warning)
                result = self.api.autograde(self.assignment, outcome.student, force=True, create=True)
        finally:
            shutil.rmtree(self.staging / outcome.student, ignore_errors=True)
        if not result.get("success"):
            raise batch.NotGraded("its grades could not be recorded: "
                                  + (result.get("error") or result.get("log") or "")[-2000:])

    def close(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def gpus() -> list[str]:
    """This machine's GPUs, as CUDA_VISIBLE_DEVICES values (that variable if it is set)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [g.strip() for g in visible.split(",") if g.strip() and g.strip() != "-1"]
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(k) for k, line in enumerate(out.splitlines()) if line.startswith("GPU ")]


def local_cluster(gpu_ids: list[str], cpu_workers: int, dashboard: str):
    """One worker per GPU (pinned to it, resource GPU=1) and ``cpu_workers`` CPU-only workers,
    each a separate process with one thread, on this machine."""
    from distributed import Nanny, Scheduler
    from distributed.deploy.spec import SpecCluster

    workers = {}
    for gpu in gpu_ids:
        workers[f"gpu{gpu}"] = {"cls": Nanny, "options": {
            "nthreads": 1, "resources": {"GPU": 1}, "memory_limit": 0, "silence_logs": logging.WARNING,
            "env": {"CUDA_VISIBLE_DEVICES": gpu}}}
    for k in range(cpu_workers):
        workers[f"cpu{k}"] = {"cls": Nanny, "options": {
            "nthreads": 1, "memory_limit": 0, "silence_logs": logging.WARNING,
            "env": {"CUDA_VISIBLE_DEVICES": "" if gpu_ids else os.environ.get("CUDA_VISIBLE_DEVICES", "")}}}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": dashboard}}
    return SpecCluster(workers=workers, scheduler=scheduler, silence_logs=logging.WARNING)


def _dashboard(client) -> str:
    if importlib.util.find_spec("bokeh") is None:      # the dashboard needs it
        return "no dashboard (pip install bokeh to get one)"
    return f"dashboard: {client.dashboard_link}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aag grade-all",
        description="Autograde every submission of an assignment that is not graded yet, many at "
        "once on Dask (this machine, or a cluster with --scheduler), into nbgrader's gradebook. "
        "Run it in the course folder after nbgrader collect.",
        epilog="Arguments after -- go to every nbgrader autograde run "
        "(e.g. -- --Execute.timeout=120).")
    p.add_argument("assignment")
    p.add_argument("--course", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:8786); "
                   "default: start workers on this machine")
    p.add_argument("--gpus", default="auto", help="GPUs for this machine's workers: auto, none or "
                   "a list like 0,1 (default: auto, all of them)")
    p.add_argument("--workers", type=int, default=None, help="CPU-only workers on this machine "
                   "(default: none if there are GPUs, else one per core)")
    p.add_argument("--student", action="append", default=None,
                   help="grade only this learner (repeatable)")
    p.add_argument("--force", action="store_true", help="grade again what is graded already")
    p.add_argument("--speed-only", action="store_true", help="on a GPU machine: grade again the "
                   "submissions whose speed cells a grader without a GPU left for later "
                   "(AAG_SPEED_WITHOUT_GPU=defer)")
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="wall-clock seconds one submission's grading may take (default 1800)")
    p.add_argument("--retries", type=int, default=1, help="times a failed submission is tried "
                   "again, and a task whose worker died is moved (default 1)")
    p.add_argument("--dashboard", default=":8787", help="dashboard address of the local "
                   "scheduler (default :8787; :0 picks a free port)")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    nbgrader_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, nbgrader_args = argv[:cut], argv[cut + 1:]
    args = _parser().parse_args(argv)
    course = args.course.resolve()
    if not (course / "nbgrader_config.py").is_file() or not (course / "gradebook.db").is_file():
        print(f"aag grade-all: {course} is not a course folder (no nbgrader_config.py or "
              "gradebook.db); run it where you run nbgrader", file=sys.stderr)
        return 2
    try:
        import dask
        from distributed import Client, as_completed
    except ImportError:
        print("aag grade-all: needs dask and distributed (pip install 'dask[distributed]')",
              file=sys.stderr)
        return 2
    config = _load_config(course)
    try:
        with open_gradebook(course) as gb:
            notebooks = [nb.name for nb in gb.find_assignment(args.assignment).notebooks]
    except Exception:
        print(f"aag grade-all: no assignment {args.assignment!r} in the gradebook (run nbgrader "
              "generate_assignment first)", file=sys.stderr)
        return 2
    todo, done = submissions(course, args.assignment, notebooks, args.force,
                             set(args.student) if args.student else None)
    gpu_ids = [] if args.gpus == "none" else gpus() if args.gpus == "auto" else \
        [g for g in args.gpus.split(",") if g]
    if args.speed_only:
        if not args.scheduler and not gpu_ids:
            print("aag grade-all --speed-only: this machine has no GPU to time the speed cells "
                  "on; run it on a GPU machine (or with --scheduler and GPU workers)",
                  file=sys.stderr)
            return 2
        todo = [Submission(student, course / "submitted" / student / args.assignment)
                for student in done if speed_deferred(course, args.assignment, student)]
        print(f"aag grade-all {args.assignment} --speed-only: {len(todo)} submissions whose speed "
              "cells were left for a GPU, graded again")
    else:
        print(f"aag grade-all {args.assignment}: {len(todo)} to grade, {len(done)} graded already")
    if not todo:
        return 0
    report_path = course / REPORT_DIR / f"{args.assignment}.json"
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    dask.config.set({"distributed.scheduler.allowed-failures": max(0, args.retries)})
    scratch = Path(tempfile.mkdtemp(prefix="aag-grade-all-"))
    cluster = None
    writer = Writer(course, args.assignment, config)
    start = time.monotonic()
    failed = 0
    try:
        kit, speed = make_kit(course, args.assignment, config, scratch, nbgrader_args, args.timeout)
        if args.scheduler:
            client = Client(args.scheduler)
        else:
            cpu = args.workers if args.workers is not None else (0 if gpu_ids else os.cpu_count() or 1)
            if not gpu_ids and cpu < 1:
                cpu = 1
            cluster = local_cluster(gpu_ids, cpu, args.dashboard)
            client = Client(cluster)
        with client:
            try:
                client.wait_for_workers(1, timeout=300)
            except TimeoutError:
                print("aag grade-all: no Dask worker joined the scheduler within 300 s",
                      file=sys.stderr)
                return 2
            offers_gpu = any(w.get("resources", {}).get("GPU")
                             for w in client.scheduler_info(n_workers=-1)["workers"].values())
            resources = {"GPU": 1} if speed and offers_gpu else None
            print(_dashboard(client))
            if speed and not offers_gpu:
                if args.speed_only:
                    print("aag grade-all --speed-only: no worker offers a GPU", file=sys.stderr)
                    return 2
                from autograder.core.spec import speed_without_gpu, what_speed_cells_get
                worth = speed_without_gpu("autograde")
                print("no worker offers a GPU: the speed cells are graded without one and will "
                      f"{what_speed_cells_get(worth, args.assignment)} (AAG_SPEED_WITHOUT_GPU: "
                      "zero, full or defer)")
            kit_future = client.scatter(kit, broadcast=True)
            run = secrets.token_hex(4)      # task keys unique to this run (a shared scheduler)
            futures = {}
            for sub in todo:
                try:
                    files = batch.read_submission(sub.folder)
                except (safe_files.CopyLimitExceeded, OSError) as exc:
                    failed += 1
                    _say(report, len(futures) + failed, len(todo), sub.student, None, str(exc))
                    continue
                future = client.submit(batch.grade_submission, kit_future, sub.student, files,
                                       key=f"grade-{args.assignment}-{sub.student}-{run}", pure=False,
                                       retries=args.retries, resources=resources)
                futures[future] = sub.student
            count = len(todo) - len(futures)
            for future in as_completed(futures):
                count += 1
                student = futures[future]
                try:
                    outcome = future.result()
                    writer.record(outcome)
                except Exception as exc:  # NotGraded, KilledWorker, a worker's error
                    failed += 1
                    _say(report, count, len(todo), student, None, _why(exc))
                else:
                    _say(report, count, len(todo), student, outcome, None)
                report_path.write_text(json.dumps(report, indent=1))
    finally:
        writer.close()
        if cluster is not None:
            cluster.close()
        shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.monotonic() - start
    graded = len(todo) - failed
    print(f"aag grade-all {args.assignment}: {graded} graded, {failed} not graded, in {elapsed:.0f} s "
          f"({3600 * graded / max(elapsed, 1e-9):.0f} submissions an hour); report: "
          f"{report_path.relative_to(course)}")
    return 1 if failed else 0


def _why(exc: BaseException) -> str:
    name = type(exc).__name__
    if name == "KilledWorker":
        return "its worker died while grading it, twice (killed, out of memory, or a crash)"
    text = str(exc).strip() or name
    return text if isinstance(exc, batch.NotGraded) else f"{name}: {text}"


def _say(report: dict, count: int, total: int, student: str, outcome, why) -> None:
    if outcome is None:
        print(f"[{count}/{total}] {student}: not graded: {why.splitlines()[0]}", flush=True)
        report[student] = {"graded": False, "why": why}
        return
    score = sum(s for s, _ in outcome.scores.values())
    most = sum(m for _, m in outcome.scores.values())
    print(f"[{count}/{total}] {student}: {score:g}/{most:g} points in {outcome.seconds:.0f} s "
          f"({outcome.worker})", flush=True)
    report[student] = {"graded": True, "score": score, "max_score": most,
                       "seconds": round(outcome.seconds, 1), "worker": outcome.worker}


if __name__ == "__main__":
    sys.exit(main())
