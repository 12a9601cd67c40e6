"""nbgrader preprocessors and the kernel manager the course adds to nbgrader's pipelines
(configured in nbgrader_config.py).

One preprocessor per module, named with a verb like nbgrader's own (``ClearHiddenTests``).
Nothing here imports Numba: these run in the grader's process, not in the learner's kernel.
"""

from autograder.grading.nbgrader_ext.execute_guarded import ExecuteGuarded
from autograder.grading.nbgrader_ext.hide_hidden_tests import HideHiddenTests
from autograder.grading.nbgrader_ext.judge_submission import JudgeSubmission
from autograder.grading.nbgrader_ext.sandboxed_kernel import SandboxedKernelManager

__all__ = ["ExecuteGuarded", "HideHiddenTests", "JudgeSubmission", "SandboxedKernelManager"]
