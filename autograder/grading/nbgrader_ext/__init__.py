"""nbgrader preprocessors and the kernel manager the course adds to nbgrader's pipelines
(configured in nbgrader_config.py).

One preprocessor per module, named with a verb like nbgrader's own (``ClearHiddenTests``); the
export plugin is named as nbgrader's (``CsvExportPlugin``).
Nothing here imports Numba: these run in the grader's process, not in the learner's kernel.
"""

from autograder.grading.nbgrader_ext.add_model_answers import AddModelAnswers
from autograder.grading.nbgrader_ext.execute_guarded import ExecuteGuarded
from autograder.grading.nbgrader_ext.export_per_exercise import PerExerciseCsvExportPlugin
from autograder.grading.nbgrader_ext.hide_hidden_tests import HideHiddenTests
from autograder.grading.nbgrader_ext.hide_model_answers import HideModelAnswers
from autograder.grading.nbgrader_ext.judge_submission import JudgeSubmission
from autograder.grading.nbgrader_ext.late_penalty import LatePenalty
from autograder.grading.nbgrader_ext.replay_grading import ReplayGrading
from autograder.grading.nbgrader_ext.restore_locked_cells import RestoreLockedCells
from autograder.grading.nbgrader_ext.sandboxed_kernel import SandboxedKernelManager
from autograder.grading.nbgrader_ext.scrub_grader_paths import ScrubGraderPaths

__all__ = ["AddModelAnswers", "ExecuteGuarded", "HideHiddenTests", "HideModelAnswers",
           "JudgeSubmission", "LatePenalty",
           "PerExerciseCsvExportPlugin", "ReplayGrading", "RestoreLockedCells",
           "SandboxedKernelManager", "ScrubGraderPaths"]
