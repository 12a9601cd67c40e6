"""All About GPUs: the course's package (device layer, exercises, checks, timing, grading).

Importing it picks the backend (NVIDIA, AMD or CPU mode) before Numba's CUDA target loads, so a
notebook starts with ``import autograder as ag`` and only then ``from numba import cuda``.
"""

import os as _os
import sys as _sys

from .device import select as _select


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
    from . import experiments, problems, timing, visual  # noqa: E402,F401
    from .checks import CheckFailed  # noqa: E402,F401
    # What CPU mode raises at a race or a divergent barrier: a notebook catches them by these
    # names (importing them from the checking code's own modules would flag every submission).
    from .races import BarrierDivergence, GlobalMemoryRace, SharedMemoryRace  # noqa: E402,F401
    from .notebook import banner, run_isolated, setup_notebook  # noqa: E402,F401
    from .hints import hint  # noqa: E402,F401
    from .explain import install as explain_errors  # noqa: E402,F401

    setup_notebook()

__all__ = ["backend", "backend_error", "banner", "experiments", "problems", "timing", "visual",
           "CheckFailed", "SharedMemoryRace", "GlobalMemoryRace", "BarrierDivergence", "run_isolated", "setup_notebook", "hint", "explain_errors"]
