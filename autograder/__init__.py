"""All About GPUs: the course's package.

Importing it picks the backend (NVIDIA, AMD or CPU mode) before Numba's CUDA target loads, so a
notebook starts with ``import autograder as ag`` and only then ``from numba import cuda``.

The package is in layers; each imports only from the layers before it (tests/test_layers.py):

======== ===========================================================================================
core     verdicts and checks, error texts, progress: pure Python, no Numba at import
machine  the device (choice, facts), timing, the CUDA simulator with the course's additions
grading  the Problem class, the speed test, the judge and its sandboxed student process, nbgrader
problems one module per chapter (its exercises, references, notebook helpers), found by name
learner  what a notebook uses: its setup, hints, experiments, pictures
tools    the ``aag`` command line: build, bench, doctor, workspace, grade
======== ===========================================================================================

This file is the facade above them all: ``ag.problems.ch02.vector_add.check(...)``,
``ag.backend``, ``ag.CheckFailed``, ``ag.hint(...)``, ``ag.reveal(...)`` and the modules' old paths
(``autograder.judge`` is ``autograder.grading.judge``; see ``_aliases``).
"""

import os as _os
import sys as _sys

from autograder import _aliases

_aliases.install()

from autograder.machine.device import select as _select  # noqa: E402


def _running_cli() -> bool:
    # `python -m autograder ...` (argv[0] is "-m" while the package loads) or the `aag` script:
    # the CLI must work even when the backend cannot be chosen, so that `doctor` can say why.
    return _sys.argv[:1] == ["-m"] or _os.path.basename(_sys.argv[0] if _sys.argv else "") == "aag"


try:
    backend = _select()
    backend_error = None
except Exception as _exc:  # a bad AAG_BACKEND, a missing GPU that was asked for, a broken Numba
    if not _running_cli():
        raise
    backend, backend_error = None, _exc

if backend is not None:
    if backend.name == "cpu":
        # The grader's data-flow record of every check call (CPU mode), hooked before any
        # learner code runs.
        from autograder.grading import provenance as _provenance
        _provenance.install()
    from autograder import problems  # noqa: E402,F401
    from autograder.grading import judge as _judge  # noqa: E402,F401  (a speed cell's test)
    from autograder.core.checks import CheckFailed  # noqa: E402,F401
    from autograder.core.explain import install as explain_errors  # noqa: E402,F401
    from autograder.learner import experiments, profiler, visual  # noqa: E402,F401
    from autograder.learner.profiler import profile  # noqa: E402,F401
    from autograder.learner.answers import reveal  # noqa: E402,F401
    from autograder.learner.hints import hint  # noqa: E402,F401
    from autograder.learner.notebook import banner, run_isolated, setup_notebook  # noqa: E402,F401
    from autograder.machine import timing  # noqa: E402,F401
    # What CPU mode raises at a race or a divergent barrier: a notebook catches them by these
    # names (importing them from the checking code's own modules would flag every submission).
    from autograder.machine.simulator.races import (  # noqa: E402,F401
        BarrierDivergence, GlobalMemoryRace, SharedMemoryRace)

    setup_notebook()

def __getattr__(name: str):
    """``ag.checks``, ``ag.cpu_mode``, ``ag.problem``...: the modules by their old names, loaded
    on first use (before the layers each was an attribute of the package once imported)."""
    target = _aliases.new_name(f"{__name__}.{name}")
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    return importlib.import_module(target)


__all__ = ["backend", "backend_error", "banner", "experiments", "problems", "profile", "profiler",
           "timing", "visual",
           "CheckFailed", "SharedMemoryRace", "GlobalMemoryRace", "BarrierDivergence", "run_isolated",
           "setup_notebook", "hint", "reveal", "explain_errors"]
