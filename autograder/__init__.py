"""All About GPUs: the course's package (device layer, exercises, checks, timing, grading).

Importing it picks the backend (NVIDIA, AMD or CPU mode) before Numba's CUDA target loads, so a
notebook starts with ``import autograder as ag`` and only then ``from numba import cuda``.
"""

from .device import select as _select

backend = _select()

from . import experiments, problems, timing  # noqa: E402
from .checks import CheckFailed  # noqa: E402
from .notebook import banner, run_isolated, setup_notebook  # noqa: E402

setup_notebook()

__all__ = ["backend", "banner", "experiments", "problems", "timing", "CheckFailed", "run_isolated", "setup_notebook"]
