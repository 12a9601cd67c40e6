"""Compile a chapter's course kernels for an H200 without a GPU: shared by the chapter tests."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PRELUDE = (
    "import os; os.environ['AAG_BACKEND'] = 'cpu'\n"
    "import numba.cuda.simulator\n"
    "from numba import cuda, types\n"
    "from autograder.problems.{chapter} import references as r\n"
    "import numba\n"
    "import numba.cuda.dispatcher as d\n"
    "class Dev: compute_capability = (9, 0)\n"      # device functions ask the GPU for its cc
    "d.get_current_device = lambda: Dev\n"         # (as autograder.learner.visual.code does)
)
_COMPILE = (
    "for kern, sig in sigs:\n"
    "    ptx, _ = cuda.compile_ptx(kern.py_func, sig, cc=(9, 0))\n"
    "    assert '.entry' in ptx\n"
    "print('compiled', len(sigs))\n"
)


def assert_compiles_for_h200(chapter: str, kernels: str, count: int) -> None:
    """The chapter's kernels are plain Python under the simulator; here they are compiled with
    the real Numba CUDA compiler for compute capability 9.0 (the CUDA toolkit's NVVM, no GPU), in
    a fresh process. ``kernels`` is code that binds the references' globals (``r.cuda`` …) and
    defines ``sigs``, a list of (kernel, argument types); all ``count`` of them must compile."""
    from autograder.learner.visual import code
    found = code.find_toolkit()
    if not (found.get("nvvm") and found.get("nvrtc")):
        pytest.skip("the CUDA toolkit wheels are not installed (AAG_EXTRAS=cuda13 ./aag test)")
    script = _PRELUDE.format(chapter=chapter) + kernels + _COMPILE
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"})
    if "NVVM" in proc.stderr and "not found" in proc.stderr.lower():
        pytest.skip("no NVVM library here: " + proc.stderr[-300:])
    assert proc.returncode == 0 and f"compiled {count}" in proc.stdout, \
        proc.stdout + proc.stderr[-3000:]
