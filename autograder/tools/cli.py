"""``aag``: the course's command line (``./aag`` at the repository root bootstraps and calls it).

    aag lab [--workspace DIR] [--no-browser] [-- JUPYTER ARGS]   sync the workspace, open JupyterLab
    aag workspace [--workspace DIR]                              sync the workspace only
    aag test [PYTEST ARGS]                                       staleness check + the test suite
    aag doctor [--json]                                          explain this machine
    aag grade NOTEBOOK [--json]                                  grade your notebook with the judge
    aag grade-all ASSIGNMENT [--scheduler ADDRESS]               autograde a class at once, on Dask
    aag class-report ASSIGNMENT [--plot PNG]                     how the class did, per exercise
    aag course init --course-id ID [--exchange DIR] [...]        set up a class (instructors)
    aag release|collect|feedback ASSIGNMENT / aag export         a class's cycle (instructors)
    aag build [...]                                              regenerate course/ and solutions/
    aag bench [...] / aag calibrate [...]                        benchmarks, speed bars

Modules behind ``build``, ``bench`` and ``calibrate`` are imported only when used, so a problem in
one of them never stops ``lab`` or ``doctor``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Sequence

from autograder.tools import workspace as ws

# Commands whose arguments belong to another program: passed through untouched, so that
# `aag test -k add -x` or `aag build --check` need no quoting.
_PASSTHROUGH = {
    "test": "run the test suite (staleness check, then pytest; arguments go to pytest)",
    "build": "regenerate course/ and solutions/ from source/ (arguments go to autograder.build)",
    "bench": "benchmark reference kernels against CPU, libraries and the roofline",
    "calibrate": "measure this machine and set speed bars",
    "grade": "grade your own notebook as the instructor would (hidden tests, speed on a GPU)",
    "grade-all": "autograde every submission of an assignment at once, on Dask (instructors)",
    "class-report": "after grading: pass rates, commonest failing verdicts, flagged submissions",
    "course": "set up a class: aag course init --course-id ID --exchange DIR (instructors)",
    "release": "build an assignment, put it into the gradebook, set its due date, release it",
    "collect": "collect an assignment's new and resubmitted work from the exchange",
    "feedback": "generate and release an assignment's feedback to the learners",
    "export": "write the class's grades as CSV, one column per exercise",
}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))      # honours taskset/cgroup CPU limits (Linux)
    except AttributeError:
        return os.cpu_count() or 1


def workers() -> int:
    """pytest-xdist workers for ``aag test``: one more than the cores."""
    return _cores() + 1


def _delegate(module: str, argv: Sequence[str], func: str = "main") -> int:
    """Call ``autograder.<module>.<func>(argv)``, importing it only now."""
    name = f"autograder.{module}"
    if importlib.util.find_spec(name) is None:
        print(f"aag: {name} is not part of this checkout yet", file=sys.stderr)
        return 2
    try:
        rc = getattr(importlib.import_module(name), func)(list(argv))
    except SystemExit as exc:                     # argparse in the callee exits on bad arguments
        rc = exc.code
    if rc is None:
        return 0
    return rc if isinstance(rc, int) else 1


def cmd_build(argv: Sequence[str]) -> int:
    return _delegate("tools.build", argv)


def cmd_bench(argv: Sequence[str]) -> int:
    return _delegate("tools.bench", argv)


def cmd_calibrate(argv: Sequence[str]) -> int:
    return _delegate("tools.bench", argv, func="calibrate")


def cmd_grade(argv: Sequence[str]) -> int:
    return _delegate("tools.grade", argv)


def cmd_grade_all(argv: Sequence[str]) -> int:
    return _delegate("tools.grade_all", argv)


def cmd_class_report(argv: Sequence[str]) -> int:
    return _delegate("tools.class_report", argv)


def _class_command(name: str) -> Callable[[Sequence[str]], int]:
    def run(argv: Sequence[str]) -> int:
        from autograder.tools import course
        return course.run(name, argv)
    return run


def _debian_root() -> str | None:
    """Why ``aag test`` may not install Debian packages here, or None when it may (root on Debian:
    CI, containers)."""
    if not sys.platform.startswith("linux"):
        return f"this is {sys.platform}, not Debian"
    try:
        release = {key: value.strip('"') for key, _, value in (
            line.partition("=") for line in Path("/etc/os-release").read_text().splitlines())}
    except OSError:
        release = {}
    if release.get("ID") != "debian":
        return f"this is {release.get('PRETTY_NAME', 'an unknown Linux')}, not Debian"
    if os.geteuid() != 0:
        return "installing Debian packages needs root (sudo apt-get install chromium)"
    if not shutil.which("apt-get"):
        return "apt-get is missing"
    return None


def _prepare_browser_test(paths: Sequence[str]) -> None:
    """tests/test_browser.py drives Debian's Chromium through Playwright (a dev extra, so already
    installed). Install Chromium when this run includes that test and it is missing, where that
    is possible (root on Debian, as in CI); elsewhere the test skips and says why, or fails under
    AAG_BROWSER_TEST=require. AAG_BROWSER_TEST=off skips it and installs nothing."""
    import subprocess

    if os.environ.get("AAG_BROWSER_TEST", "").strip().lower() == "off":
        return
    if os.environ.get("PYTEST_CURRENT_TEST"):                   # never from inside a test
        return
    if paths and not any(Path(p.split("::")[0]).name in ("tests", "test_browser.py") for p in paths):
        return
    if os.environ.get("AAG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    why_not = _debian_root()
    if why_not:
        print(f"aag test: no Chromium for the browser test, and {why_not}: it will skip "
              f"(tests/test_browser.py says how to run it)", flush=True)
        return
    print("aag test: installing Debian's chromium for the browser test (apt-get, about 30 s)",
          flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium",
               "fonts-liberation"]
    quiet = {"env": env, "stdout": subprocess.DEVNULL}
    if subprocess.run(install, **quiet).returncode != 0:
        # A fresh container has no package lists yet.
        subprocess.run(["apt-get", "update", "-qq"], **quiet)
        if subprocess.run(install, **quiet).returncode != 0:
            print("aag test: apt-get install chromium failed (see above); the browser test will "
                  "say so", file=sys.stderr, flush=True)


class _Beside:
    """A call run in a thread of this process while it waits for another (its prints kept for
    later): :meth:`result` is its return code and what it printed; an exception is a failure."""

    def __init__(self, call):
        import threading
        self._call, self._thread = call, threading.Thread(target=self._run, daemon=True)
        self._rc, self._said = 1, ""

    def _run(self) -> None:
        import contextlib
        import io
        import traceback
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                self._rc = self._call()
            except BaseException:
                traceback.print_exc()
        self._said = buf.getvalue()

    def start(self) -> None:
        self._thread.start()

    def result(self) -> tuple[int, str]:
        if self._thread.ident is None:
            self._run()
        self._thread.join()
        return self._rc, self._said


def cmd_test(argv: Sequence[str]) -> int:
    import subprocess

    root = ws.repo_root()
    failed = []
    # Generated notebooks out of date with source/ is a failure like any other: CI must say so.
    # The check runs beside pytest (it keeps one core busy for about a minute while pytest's
    # workers start), and its verdict is reported at the end.
    staleness = None
    if importlib.util.find_spec("autograder.tools.build") is None:
        print("aag test: autograder.tools.build not present; skipping the staleness check", flush=True)
    else:
        print("aag test: checking course/ and solutions/ are up to date with source/ (beside "
              "pytest; its verdict comes at the end)", flush=True)
        staleness = _Beside(lambda: _delegate("tools.build", ["--check"]))
        os.environ["AAG_STALENESS_CHECKED"] = "1"   # tests/test_build.py need not run it again

    # The judge starts a process per submission and each imports the course package: where
    # PYTHONDONTWRITEBYTECODE is set (CI machines) every one would compile its sources again,
    # about half a second of processor time each, over a thousand times in the suite.
    import compileall
    compileall.compile_dir(str(root / "autograder"), quiet=1)

    args = list(argv)
    if not any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in args):
        # The suite's tests run from milliseconds to two minutes: a worker that runs out of work
        # takes pending tests from the others instead of idling at the end. One worker more than
        # cores: about a seventh of the time a worker waits (a kernel starting, nbgrader loading,
        # a sandbox being set up), and the extra one keeps the cores busy then.
        steal = [] if any(a.startswith("--dist") for a in args) else ["--dist", "worksteal"]
        args = ["-n", str(workers()), *steal, *args]
    # Test paths given by the caller replace the default suite.
    paths = [a for a in argv if not a.startswith("-") and (root / a.split("::")[0]).exists()]
    if not paths:
        args.append("tests")
    _prepare_browser_test(paths)
    cmd = [sys.executable, "-m", "pytest", *args]
    print("aag test:", " ".join(cmd[1:]), flush=True)
    if staleness is not None:
        staleness.start()       # in this process, which only waits for pytest meanwhile
    rc = subprocess.call(cmd, cwd=root)
    if rc == 5:
        failed.append("pytest collected no tests")
    elif rc != 0:
        failed.append(f"pytest (exit {rc})")
    if staleness is not None:
        check_rc, said = staleness.result()
        print("aag test: the staleness check" + (":\n" + said.rstrip() if said.strip() else
                                                 " passed"), flush=True)
        if check_rc != 0:
            failed.append("staleness check (run ./aag build and commit the result)")
            rc = rc or 1
    if failed:
        print("aag test: FAILED: " + "; ".join(failed), file=sys.stderr)
        return rc or 1
    print("aag test: all passed")
    return 0


def cmd_workspace(args: argparse.Namespace) -> int:
    try:
        ws.sync(workspace=args.workspace)
    except FileNotFoundError as exc:
        print(f"aag: {exc}", file=sys.stderr)
        return 1
    return 0


# nbgrader's Assignments tab warns at every JupyterLab start ("No nbgrader_config.py file found")
# when no settings file is on Jupyter's config path: a learner working alone needs none, so this
# environment gets an empty one (a class's settings come from the instructor, as a file that wins).
_QUIET_NBGRADER = ("# Written by `aag lab`: nbgrader's Assignments tab reads this at JupyterLab's "
                   "start.\n# A learner working alone needs no setting here.\n"
                   "c = get_config()  # noqa: F821\n")


def quiet_nbgrader(prefix: Path) -> None:
    path = Path(prefix) / "etc" / "jupyter" / "nbgrader_config.py"
    if path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_QUIET_NBGRADER)
    except OSError:
        pass            # an environment this user cannot write: the warning stays, nothing else


def running_lab(workspace: Path) -> dict | None:
    """The Jupyter server already running on ``workspace`` (its info file, whose process lives),
    or None."""
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:
        return None
    here = Path(workspace).resolve()
    for server in list_running_servers():
        root = server.get("root_dir") or server.get("notebook_dir")
        if root and Path(root).resolve() == here:
            return server
    return None


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    try:
        result = ws.sync(workspace=args.workspace)
    except FileNotFoundError as exc:
        print(f"aag: {exc}", file=sys.stderr)
        return 1
    quiet_nbgrader(Path(sys.prefix))
    running = None if args.another else running_lab(result.workspace)
    if running is not None:
        # A second server on the same files: two kernels per notebook, and two tabs saving over
        # each other's edits. Point at the one that runs instead.
        url = running.get("url", "").rstrip("/") + "/lab"
        token = running.get("token")
        print(f"aag: JupyterLab is already running on {result.workspace} (process "
              f"{running.get('pid')}): open {url}{'?token=' + token if token else ''}\n"
              f"     Stop it first (Ctrl-C in its terminal) to start a new one, or start a second "
              "one anyway with ./aag lab --another.")
        return 0
    cmd = [sys.executable, "-m", "jupyter", "lab"]
    if args.no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        # JupyterLab refuses to start as root without it (containers, WSL and cloud machines
        # often log in as root); the course's own grading never runs learner code as root.
        cmd.append("--allow-root")
    cmd += extra
    os.chdir(result.workspace)
    sys.stdout.flush()
    sys.stderr.flush()
    # exec, not a child: JupyterLab then owns the terminal and Ctrl-C shuts it down cleanly.
    os.execv(sys.executable, cmd)
    return 0  # not reached


def cmd_doctor(args: argparse.Namespace) -> int:
    from autograder.tools import doctor
    return doctor.main(["--json"] * args.json + ["--no-ptx"] * args.no_ptx)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aag", description="All About GPUs: run the course, its tests and its tools.",
        epilog="Backend: set AAG_BACKEND=cuda|hip|cpu to override what the course detects.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    lab = sub.add_parser("lab", help="sync your workspace from course/ and open JupyterLab in it",
                         description="Sync the workspace (new chapters and files are added; your "
                         "files are never overwritten) and start JupyterLab there. Arguments "
                         "after -- go to jupyter lab.")
    lab.add_argument("--workspace", type=Path, default=None,
                     help=f"where your copy of the course lives (default: ${ws.WORKSPACE_ENV} "
                          "or workspace/ in the repository)")
    lab.add_argument("--no-browser", action="store_true", help="do not open a browser")
    lab.add_argument("--another", action="store_true", help="start a second JupyterLab even if "
                     "one already runs on this workspace")

    wsp = sub.add_parser("workspace", help="sync your workspace from course/ without starting Jupyter")
    wsp.add_argument("--workspace", type=Path, default=None)

    doc = sub.add_parser("doctor", help="explain this machine: OS, versions, GPU, chosen backend")
    doc.add_argument("--json", action="store_true", help="machine-readable output")
    doc.add_argument("--no-ptx", action="store_true", help="skip the PTX compile probe (seconds)")

    for name, text in _PASSTHROUGH.items():
        sub.add_parser(name, help=text, add_help=False)
    return p


_RUNNERS: dict[str, Callable[[Sequence[str]], int]] = {
    "test": cmd_test, "build": cmd_build, "bench": cmd_bench, "calibrate": cmd_calibrate,
    "grade": cmd_grade, "grade-all": cmd_grade_all, "class-report": cmd_class_report,
    **{name: _class_command(name) for name in ("course", "release", "collect", "feedback", "export")},
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _RUNNERS:
        return _RUNNERS[argv[0]](argv[1:])
    extra: list[str] = []
    if argv and argv[0] == "lab" and "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    args = _parser().parse_args(argv)
    if args.command == "lab":
        return cmd_lab(args, extra)
    if args.command == "workspace":
        return cmd_workspace(args)
    if args.command == "doctor":
        return cmd_doctor(args)
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
