"""What the course adds to a Jupyter kernel: the banner, short verdicts, and ``%%isolated``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from autograder.machine import device

_shown = {"banner": False, "setup": False}


def banner() -> None:
    """Print the one-line backend banner (once per kernel unless called again explicitly)."""
    print(device.current().banner())
    _shown["banner"] = True


def _internal_files() -> tuple[str, ...]:
    """Where the frames a learner need not read live: Numba (its CUDA simulator runs every
    kernel of CPU mode, each block's threads in Python threads), numba-cuda, this package."""
    import importlib.util
    import threading
    from pathlib import Path
    found = [threading.__file__]
    for name in ("numba", "numba_cuda", "autograder"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found += [str(Path(p).resolve()) + os.sep for p in spec.submodule_search_locations]
    return tuple(found)


def trim_traceback(tb):
    """``tb`` without the frames in :func:`_internal_files` (if every frame is, the last one
    stays), and how many were left out."""
    import types
    internal = _internal_files()
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = [f for f in frames if not f.tb_frame.f_code.co_filename.startswith(internal)]
    kept = kept or frames[-1:]
    trimmed = None
    for f in reversed(kept):
        trimmed = types.TracebackType(trimmed, f.tb_frame, f.tb_lasti, f.tb_lineno)
    return trimmed, len(frames) - len(kept)


def _show_error(shell, etype, value, tb, tb_offset=None):
    """How an error in a cell is shown. A failed check is a verdict, not a crash: the verdict
    alone. Any other error: its traceback without the frames inside Numba's simulator and the
    course's code (a kernel's IndexError in CPU mode went through 13 of them), one line saying
    how many were left out; the plain-words line still follows (:mod:`autograder.core.explain`).
    IPython ignores what a custom handler returns (9.x), so the handler displays the error itself;
    it goes out as an "error" output, which is what makes nbgrader fail a test cell."""
    from autograder.core.checks import CheckFailed
    if issubclass(etype, CheckFailed):
        stb = [f"\x1b[0;31m{etype.__name__}\x1b[0m: {value}"]
    else:
        trimmed, hidden = trim_traceback(tb)
        stb = shell.InteractiveTB.structured_traceback(etype, value, trimmed, tb_offset=tb_offset)
        if hidden:
            stb = [*stb[:-1], f"({hidden} frame{'s' * (hidden != 1)} inside Numba's CUDA simulator "
                              "and the course's code not shown)", stb[-1]]
    shell._showtraceback(etype, value, stb)
    return stb


def run_isolated(code: str, timeout: float = 300.0) -> int:
    """Run ``code`` in a fresh Python process on the same backend and print what it printed.

    For experiments that may break the process: on a GPU, an out-of-bounds write can leave the
    CUDA context unusable, and only a fresh process gets a new one.
    """
    prelude = "import autograder\n"
    env = dict(os.environ, AAG_BACKEND=device.current().name, PYTHONUNBUFFERED="1")
    try:
        proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"[isolated] stopped after {timeout:.0f} s")
        return -1
    # Everything goes to stdout: in a graded notebook, text on stderr would cost a test cell.
    if proc.stdout:
        print(proc.stdout, end="" if proc.stdout.endswith("\n") else "\n")
    if proc.stderr:
        print(proc.stderr, end="" if proc.stderr.endswith("\n") else "\n")
    print(f"[isolated] the separate process exited with status {proc.returncode}"
          + (" (it failed; this notebook's kernel is unaffected)" if proc.returncode else ""))
    errors = [line for line in proc.stderr.splitlines() if line and not line[0].isspace()]
    if proc.returncode and errors:
        # the plain-words line an error in an ordinary cell gets (autograder.core.explain)
        from autograder.core.explain import explain_text
        plain = explain_text(errors[-1])
        if plain:
            print(f"In plain words: {plain}")
    return proc.returncode


def setup_notebook() -> None:
    """Register the verdict display and the ``%%isolated`` cell magic in IPython (idempotent)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or _shown["setup"]:
        return
    shell.set_custom_exc((Exception,), _show_error)
    from autograder.core import explain
    explain.install(shell)      # a plain-words line under any error of the learner's own cells

    def isolated(line, cell):
        """%%isolated [timeout]: run this cell in a fresh Python process."""
        run_isolated(cell, float(line) if line.strip() else 300.0)

    shell.register_magic_function(isolated, magic_kind="cell", magic_name="isolated")
    _shown["setup"] = True
