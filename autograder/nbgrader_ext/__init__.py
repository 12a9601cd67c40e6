"""nbgrader preprocessors and the kernel manager the course adds to nbgrader's pipelines
(configured in nbgrader_config.py).

One preprocessor per module, named with a verb like nbgrader's own (``ClearHiddenTests``).
Nothing here imports Numba: these run in the grader's process, not in the learner's kernel.
"""

from .execute_guarded import ExecuteGuarded
from .hide_hidden_tests import HideHiddenTests
from .judge_submission import JudgeSubmission
from .sandboxed_kernel import SandboxedKernelManager

__all__ = ["ExecuteGuarded", "HideHiddenTests", "JudgeSubmission", "SandboxedKernelManager"]
