"""Run a snippet in a fresh Python where ``import numba`` fails and ``autograder`` is a bare
package (its ``__init__``, which picks a backend through Numba, never runs): what a module does on
a machine without Numba."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"


def run(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    script = textwrap.dedent(f"""
        import sys, types
        sys.modules["numba"] = None
        pkg = types.ModuleType("autograder")
        pkg.__path__ = [{str(PACKAGE)!r}]
        sys.modules["autograder"] = pkg
    """) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})
