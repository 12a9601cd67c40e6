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


def _show_check_failure(shell, etype, value, tb, tb_offset=None):
    # A failed check is a verdict, not a crash: show the verdict without a Python traceback.
    # IPython ignores what a custom handler returns (9.x), so the handler must display the error
    # itself; it goes out as an "error" output, which is what makes nbgrader fail the test cell.
    stb = [f"\x1b[0;31m{etype.__name__}\x1b[0m: {value}"]
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
    from autograder.core.checks import CheckFailed
    shell.set_custom_exc((CheckFailed,), _show_check_failure)
    from autograder.core import explain
    explain.install(shell)      # a plain-words line under any error of the learner's own cells

    def isolated(line, cell):
        """%%isolated [timeout]: run this cell in a fresh Python process."""
        run_isolated(cell, float(line) if line.strip() else 300.0)

    shell.register_magic_function(isolated, magic_kind="cell", magic_name="isolated")
    _shown["setup"] = True
