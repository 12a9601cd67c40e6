"""Naive checks: how grading works when the learner's code and the check share one process.

Two kinds, each what a bank entry's ``# naive:`` line can name:

- ``course``: the course's own test cell (``ag.problems.chNN.<problem>.check(fn)`` then
  ``check_hidden(fn)``, taken verbatim from the chapter source), run in the learner's process: how
  grading worked before the judge (the instructor's secret seed in ``AAG_SECRET_SEED``, set here).
- ``allclose``: a typical hand-written course test: fixed ``np.random.default_rng(0)`` inputs, one
  small size, ``np.allclose(out, expected, rtol=1e-3)``. Written the way such tests usually are,
  and one realistic style per exercise (they differ on purpose; see each harness):

  ============ ====== ===================================================================
  exercise     n      style
  ============ ====== ===================================================================
  amdahl       8      ``expected`` computed before calling the function
  thread_ids   1000   128 threads per block, ``expected`` computed before the launch
  saxpy        1000   the reference is computed AFTER the launch, from the device inputs
  vector_add   256    host-launcher style, ``expected = x + y`` computed before the call
  gpu_timer    5      runs of known lengths (one of them slow) on the chapter's busy work; the
                      median of the last five true durations afterwards, ``rtol=0.05``
  grid_stride  200    2 blocks x 32 threads; the reference goes into a device buffer that is
                      freed before the output is allocated; on a GPU, a speed check too
                      (:func:`naive_speed`: n = 2^28, CUDA events on the default stream, best
                      of three launches on the same buffers, pass within 1.25x a reference)
  rgb_to_gray  16x24  16 x 16 blocks over a rows x cols image in [0, 1), NumPy expected first
  blur         20x30  radius 1, 16 x 16 blocks, the expected means from NumPy slices first
  matmul_naive 16x24  times 24 x 20, 16 x 16 blocks, ``expected = a @ b`` first
  tiled_matmul 16x24  times 24 x 32, TILE x TILE = 8 x 8 blocks, ``expected = a @ b`` first;
                      every side a multiple of TILE, as textbook tiled-matmul tests have it
  matmul_time_ 3      the chapter's device (67 TFLOP/s, 4.8 TB/s), 4096^3 with tiles 1, 16
  bound               and 64, each answer typed in from the notebook's worked numbers
  image_time_  2      the notebook's two questions (gray and blur on 4097 x 8191 at 4.8 TB/s),
  bound               answers typed in to 4 digits, ``rtol=1e-2``
  ============ ====== ===================================================================

  Each chapter keeps its harnesses (the ones above included) in its bank folder,
  ``bank/chNN_name/naive.py`` (a ``HARNESS`` dict each), written in the same spirit: fixed inputs, whole tiles where textbooks use them, answers typed in
  from the notebook's worked numbers.

  (Why n = 200 for grid_stride: in CPU mode a freed buffer keeps its contents only below 1 KiB,
  NumPy's small-allocation cache; at 256 float32s glibc reuses the block but overwrites its
  first 16 bytes. Why saxpy's reference is computed afterwards: a harness that computes it first
  cannot be fooled by a kernel that zeroes its inputs, which is what that exploit shows.)

A third check is not a header value: ``course_speed``, the chapter's own speed cell
(``check_speed``) run in the learner's process, to see whether the course's timer is fooled too.

``run_naive(entry)`` runs ``SETUP`` + the entry + the naive check as three cells of a fresh
IPython ``InteractiveShell`` in a subprocess (so ``get_ipython()`` works, and nothing leaks between
entries; forked from a process that imported the course once, :class:`_Zygote`), and says whether the check cell *scored*, by nbgrader 0.9.6's rule: the cell scores
unless its execution failed (nbgrader appends an error output when the kernel's reply is an error,
even if no traceback was shown), a traceback was shown, or it wrote to stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

from . import EXERCISES, ROOT, SETUP, Entry, grading_cell, parse, speed_cell

SECRET = "bank-naive-secret"          # the instructor's secret in naive runs (AAG_SECRET_SEED)
CHILD_TIMEOUT = 240                   # seconds for one naive run (CPU mode is slow)
TESTS = Path(__file__).resolve().parents[1]


# ---- the course's own check, in the learner's process ------------------------------------------

def naive_course(exercise: str, ns: dict) -> bool:
    """Run the chapter's real test cell (check + hidden check) in ``ns``; True if nothing raised."""
    source = grading_cell(exercise)
    try:
        exec(compile(source, f"<{EXERCISES[exercise]['test_id']}>", "exec"), ns)
    except Exception as exc:  # noqa: BLE001 - the verdict of a failed check is an exception
        print(f"naive course check failed: {type(exc).__name__}: {str(exc)[:500]}")
        return False
    return True


# ---- typical hand-written tests ----------------------------------------------------------------

_reference = {}


def reference_add():
    """The harness's own reference kernel (a grid-stride vector add)."""
    if "add" not in _reference:
        @cuda.jit
        def reference_add(x, y, out):
            for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
                out[i] = x[i] + y[i]
        _reference["add"] = reference_add
    return _reference["add"]


def launch_2d(rows, cols, threads=(16, 16)):
    return ((cols + threads[0] - 1) // threads[0], (rows + threads[1] - 1) // threads[1]), threads


_HARNESS: dict = {}    # exercise -> harness, filled from the chapters' naive.py on first use


def _harness(exercise: str):
    """The allclose harness of an exercise, from its chapter's ``bank/chNN_name/naive.py`` (each a
    ``HARNESS`` dict), loaded on first use."""
    if exercise not in _HARNESS:
        import importlib
        for path in sorted(Path(__file__).parent.glob("ch[0-9][0-9]*_*/naive.py")):
            if not re.fullmatch(r"ch\d\d[a-z]?_[a-z0-9_]+", path.parent.name):
                continue
            _HARNESS.update(importlib.import_module(
                f"{__package__}.{path.parent.name}.naive").HARNESS)
    return _HARNESS[exercise]


def naive_allclose(exercise: str, ns: dict) -> bool:
    """A typical hand-written test of ``ns[func]``; True if it passes (an exception: False)."""
    fn = ns[EXERCISES[exercise]["func"]]
    try:
        return _harness(exercise)(fn)
    except Exception as exc:  # noqa: BLE001
        print(f"naive allclose check raised {type(exc).__name__}: {str(exc)[:500]}")
        return False


def naive_speed(kernel, method: str = "events", n: int = 1 << 28, blocks: int = 1024,
                threads: int = 256, slack: float = 1.25) -> bool:
    """A naive GPU speed check: one warm-up, then the best of three timed launches of the learner's
    kernel and of a reference, all on the same buffers, no synchronization between a launch and
    the next; pass if the learner's time is at most ``slack`` x the reference's.
    ``method="events"``: CUDA events on the default stream around the launch; ``"perf_counter"``:
    ``time.perf_counter`` around the launch, without synchronizing the device."""
    d_x = cuda.to_device(np.full(n, 1.0, np.float32))
    d_y = cuda.to_device(np.full(n, 2.0, np.float32))
    d_out = cuda.device_array(n, dtype=np.float32)

    def timed(k) -> float:
        k[blocks, threads](d_x, d_y, d_out)   # warm-up (the first call compiles)
        cuda.synchronize()
        best = float("inf")
        for _ in range(3):                    # best of three launches, to tame noise
            if method == "events":
                start, end = cuda.event(), cuda.event()
                start.record()
                k[blocks, threads](d_x, d_y, d_out)
                end.record()
                end.synchronize()
                best = min(best, cuda.event_elapsed_time(start, end))
            else:
                t0 = time.perf_counter()
                k[blocks, threads](d_x, d_y, d_out)
                best = min(best, (time.perf_counter() - t0) * 1e3)
        return best

    yours = timed(kernel)
    reference = timed(reference_add())
    cuda.synchronize()
    print(f"naive speed ({method}): yours {yours:.4f} ms, reference {reference:.4f} ms")
    return yours <= slack * reference


CHECKS = {"course": naive_course, "allclose": naive_allclose}
# Not a header value: the chapter's own speed cell (check_speed), run in the learner's process.
COURSE_SPEED = "course_speed"


# ---- running an entry in a fresh IPython shell ------------------------------------------------

@dataclass
class NaiveResult:
    entry: str
    check: str
    scored: bool            # nbgrader would give the check cell its points
    solution_ok: bool       # the entry's own cell ran without an error
    check_success: bool     # the check cell's execution result was a success
    traceback_shown: bool   # a traceback was displayed for the check cell
    stderr: str             # what the check cell wrote to stderr
    output: str             # what the check cell printed (tail)
    seconds: float

    def __str__(self) -> str:
        state = "SCORED" if self.scored else "no points"
        return (f"{self.entry} vs {self.check}: {state} (cell success={self.check_success}, "
                f"traceback={self.traceback_shown}, stderr={bool(self.stderr.strip())}, "
                f"{self.seconds:.1f} s)")


def check_cell(exercise: str, check: str) -> str:
    """The source of the naive check cell that run_naive executes after the entry."""
    if check == "course":
        return grading_cell(exercise)
    if check == COURSE_SPEED:
        source = speed_cell(exercise)
        if source is None:
            raise ValueError(f"{exercise} has no speed cell")
        return source
    if check == "allclose":
        return (f"assert __bank_naive__.naive_allclose({exercise!r}, globals()), "
                f"'naive allclose check failed'\n")
    raise ValueError(f"unknown naive check {check!r}")


def _child_env(env: dict | None = None) -> dict:
    child_env = dict(os.environ)
    child_env.pop("AAG_GRADING", None)              # the in-process check must grade here
    child_env.setdefault("AAG_SECRET_SEED", SECRET)
    child_env["PYTHONUNBUFFERED"] = "1"
    child_env.update(env or {})
    return child_env


def run_naive_detail(entry: Entry, check: str | None = None, env: dict | None = None,
                     timeout: float = CHILD_TIMEOUT) -> NaiveResult:
    """Run SETUP + entry + naive check in a fresh process; see the module docstring. With the
    default environment the process is forked from a :class:`_Zygote` that imported the course
    once; with ``env`` it is a new interpreter started with it."""
    check = check or entry.naive
    if check not in CHECKS and check != COURSE_SPEED:
        raise ValueError(f"{entry.id}: no naive check {check!r} to run")
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "result.json")
        t0 = time.monotonic()
        if env is None:
            printed = _Zygote.get().run(str(entry.path), check, result_path, tmp, timeout)
        else:
            code = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); "
                    f"from bank.naive import _child; _child()")
            proc = subprocess.run([sys.executable, "-c", code, str(entry.path), check,
                                   result_path], cwd=ROOT, env=_child_env(env),
                                  capture_output=True, text=True, timeout=timeout)
            printed = (f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n"
                       f"--- stderr\n{proc.stderr[-3000:]}")
        seconds = time.monotonic() - t0
        if not os.path.exists(result_path):
            raise RuntimeError(f"{entry.id}: the naive run left no result ({printed})")
        data = json.loads(Path(result_path).read_text())
    return NaiveResult(entry=entry.id, check=check, seconds=seconds, **data)


class _Zygote:
    """A process that imported the course, Numba's simulator and IPython once, and forks a child
    for each naive run: the child starts with nothing an earlier entry did (a fork copies the
    zygote, which never runs learner code), without the second of imports a new interpreter
    pays (about 450 runs in CI). One per pytest worker; it ends when the worker does (its
    requests' pipe closes)."""

    _one: "_Zygote | None" = None

    @classmethod
    def get(cls) -> "_Zygote":
        if cls._one is None or cls._one.proc.poll() is not None:
            cls._one = cls()
        return cls._one

    def __init__(self):
        reply_r, reply_w = os.pipe()
        code = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); "
                f"from bank.naive import _zygote; _zygote({reply_w})")
        self.proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_child_env(),
                                     stdin=subprocess.PIPE, text=True, pass_fds=(reply_w,))
        os.close(reply_w)
        self.replies = os.fdopen(reply_r, "r")

    def run(self, entry_path: str, check: str, result_path: str, tmp: str,
            timeout: float) -> str:
        log = os.path.join(tmp, "printed.txt")
        self.proc.stdin.write(json.dumps({"entry": entry_path, "check": check,
                                          "result": result_path, "log": log,
                                          "timeout": timeout}) + "\n")
        self.proc.stdin.flush()
        import select
        ready, _, _ = select.select([self.replies], [], [], timeout + 60)
        line = self.replies.readline() if ready else ""
        if not line:
            self.proc.kill()
            raise RuntimeError(f"the naive runs' zygote did not answer (exit {self.proc.poll()})")
        reply = json.loads(line)
        printed = Path(log).read_text(errors="replace") if os.path.exists(log) else ""
        return (f"{'stopped after ' + str(timeout) + ' s' if reply['timed_out'] else ''}"
                f"exit status {reply['status']}\n--- printed\n{printed[-6000:]}")


def _zygote(reply_fd: int) -> None:
    """The zygote's loop: a request per line on stdin, a child forked for each, its wait status
    (or a time-out) a line on ``reply_fd``."""
    import signal
    from IPython.core.interactiveshell import InteractiveShell  # noqa: F401  (imported once)
    replies = os.fdopen(reply_fd, "w")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                replies.close()                                # the zygote's alone
                log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(log, 1)
                os.dup2(log, 2)
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)   # not the zygote's requests
                sys.argv = ["-c", request["entry"], request["check"], request["result"]]
                _child()
            finally:
                os._exit(1)
        deadline, timed_out = time.monotonic() + request["timeout"], False
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                timed_out = True
                break
            time.sleep(0.005)
        replies.write(json.dumps({"status": status, "timed_out": timed_out}) + "\n")
        replies.flush()


def run_naive(entry: Entry, check: str | None = None, env: dict | None = None) -> bool:
    """Did the entry score on its naive check (or on ``check``)?"""
    return run_naive_detail(entry, check, env).scored


def _child() -> None:
    """In the subprocess: three cells in an InteractiveShell, then the result as JSON."""
    entry_path, check, result_path = sys.argv[1:4]
    # This module imported autograder before numba.cuda, as a course kernel does: SETUP imports
    # numba.cuda first, which in a bare process would load the real CUDA target, not CPU mode.
    from IPython.core.interactiveshell import InteractiveShell

    this = sys.modules[__name__]
    entry = parse(Path(entry_path))
    shell = InteractiveShell.instance()
    shell.user_ns["__bank_naive__"] = this
    shown: list[str] = []
    original = shell._showtraceback

    def recording(etype, evalue, stb):
        shown.append(f"{getattr(etype, '__name__', etype)}: {evalue}")
        return original(etype, evalue, stb)

    shell._showtraceback = recording

    def run(source: str):
        shown.clear()
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result = shell.run_cell(source, store_history=True)
        return result, out.getvalue(), err.getvalue(), bool(shown)

    setup, out, err, _ = run(SETUP)
    if not setup.success:
        raise SystemExit(f"the setup cell failed:\n{out}\n{err}")
    solution, sol_out, sol_err, _ = run(entry.code)
    result, out, err, traceback_shown = run(check_cell(entry.exercise, check))
    data = dict(scored=bool(result.success and not traceback_shown and not err.strip()),
                solution_ok=bool(solution.success), check_success=bool(result.success),
                traceback_shown=traceback_shown, stderr=err[-2000:],
                output=(sol_out + sol_err)[-1000:] + "\n---\n" + out[-3000:])
    with open(result_path, "w") as f:
        json.dump(data, f)
    # Learner code may leave threads or patched machinery behind: leave at once.
    sys.stdout.flush()
    os._exit(0)
