"""nbgrader configuration for All About GPUs (read by every `nbgrader ...` run from the repo root,
and by `aag build`).

The course keeps one hand-edited text source per chapter (source/chNN_topic/chNN_topic.py, jupytext
percent format); `aag build` converts it to the .ipynb nbgrader reads, next to it. Everything else
here is about grading submissions fairly and quickly on GPU machines and on CPU-only ones.
"""

import json
import os
import sys
import warnings

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    IncludeHeaderFooter,
    LimitOutput,
    LockCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from autograder.nbgrader_ext import (AddModelAnswers, ExecuteGuarded, HideHiddenTests,
                                     HideModelAnswers, JudgeSubmission, LatePenalty,
                                     PerExerciseCsvExportPlugin, RestoreLockedCells,
                                     ScrubGraderPaths)

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# nbgrader's gradebook code makes SQLAlchemy warn "Object of type <Submitted...> not in session"
# three times per autograde (harmless: nbgrader adds those objects itself right after); in a
# class's log they only bury the lines that matter.
warnings.filterwarnings("ignore", message=r"Object of type <Submitted\w+> not in session")

# --- Environment for the learner's kernel --------------------------------------------------------
# The kernel nbgrader starts inherits this process's environment.
# Any stderr output in a test cell scores 0, and Numba warns on stderr about small grids and
# implicit host<->device copies, which the early chapters use on purpose: silence both.
os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
os.environ["NUMBA_CUDA_WARN_ON_IMPLICIT_COPY"] = "0"

# --- Course layout -------------------------------------------------------------------------------
COURSE_ROOT = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = COURSE_ROOT
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "course"
c.CourseDirectory.solution_directory = "solutions"

# --- The class -----------------------------------------------------------------------------------
# `aag course init --course-id ID --exchange DIR` keeps the class's settings in .aag/course.json
# (the learners' environment gets the same two in its own nbgrader_config.py). Without it, nbgrader's
# defaults hold: no course id (release_assignment then asks for one) and /srv/nbgrader/exchange.
try:
    with open(os.path.join(COURSE_ROOT, ".aag", "course.json")) as _f:
        _class = json.load(_f)
except (OSError, ValueError):
    _class = {}
if _class.get("course_id"):
    c.CourseDirectory.course_id = _class["course_id"]
if _class.get("exchange"):
    c.Exchange.root = _class["exchange"]
# nbgrader's gradebook runs the `alembic` command each time it opens a database: found beside this
# Python, so that `.venv/bin/nbgrader db ...` works without an activated environment.
if os.path.dirname(sys.executable) not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join(filter(None, [os.path.dirname(sys.executable),
                                                       os.environ.get("PATH")]))

# The text sources hold the solutions and hidden tests: they must never be copied to learners.
# nbgrader copies every non-ignored file next to a source notebook into the release, so "*.py"
# is listed here (a chapter that ships a helper module must ship it another way).
c.CourseDirectory.ignore = [
    "*.py",
    "__pycache__",
    "*.pyc",
    ".ipynb_checkpoints",
    ".DS_Store",
    # the judge's report for the instructor (timings, flags): never copied into feedback
    "judge.json",
]

# --- Executing submissions -----------------------------------------------------------------------
# The first launch of a kernel compiles it (about a second on a GPU); on the CUDA simulator a
# chapter's checks take tens of seconds. 30 s (nbgrader's default) fails correct work on slow
# graders, so allow 300 s per cell; ExecuteGuarded makes a hang cost this once, not once per cell.
c.Execute.timeout = 300

# nbgrader's sanitizing steps, with OverwriteCells replaced by RestoreLockedCells: the same cells
# restored, but no warning for a test cell that differs from the source only by the hidden tests
# the release left out (every untouched submission had one per such cell), and one line per
# learner naming each cell they really changed.
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    RestoreLockedCells,
    CheckCellMetadata,
]
# nbgrader's default autograde pipeline, with Execute replaced by ExecuteGuarded (a cell that runs
# past the timeout restarts the kernel and the remaining cells still run; the kernel runs in the
# sandbox), and JudgeSubmission added before the grades are saved: it re-runs each exercise in a
# fresh sandboxed process with secret-seeded inputs and writes its verdicts into the test cells.
# Last, AddModelAnswers puts the source's model answer under each written answer, for whoever
# grades it in formgrader (HideModelAnswers keeps it out of the learner's feedback).
c.Autograde.autograde_preprocessors = [
    ExecuteGuarded,
    JudgeSubmission,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
    AddModelAnswers,
]

# --- Grading you can trust (docs/grading.md) ----------------------------------------------------
# Learner code (nbgrader's kernel and the judge's student processes) runs in a bubblewrap sandbox
# that cannot see the course root: gradebook.db, source/, this file, .aag/secret, other learners.
# "require" refuses to grade where no sandbox can be made; "off" grades with your rights.
c.SandboxedKernelManager.protected_paths = [COURSE_ROOT]
c.JudgeSubmission.protected_paths = [COURSE_ROOT]
c.SandboxedKernelManager.sandbox = c.JudgeSubmission.sandbox = os.environ.get("AAG_SANDBOX", "require")
# The secret mixed into every hidden case: AAG_SECRET_SEED if set, else .aag/secret (made on first
# use, readable by you only). It is removed from this process's environment so that no process
# started from here inherits it; the sandbox clears the environment as well.
c.JudgeSubmission.secret_seed = os.environ.pop("AAG_SECRET_SEED", "")
if not c.JudgeSubmission.secret_seed:
    _secret = os.path.join(COURSE_ROOT, ".aag", "secret")
    try:
        if not os.path.exists(_secret):
            import secrets

            os.makedirs(os.path.dirname(_secret), mode=0o700, exist_ok=True)
            with open(os.open(_secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as _f:
                _f.write(secrets.token_hex(32))
        with open(_secret) as _f:
            c.JudgeSubmission.secret_seed = _f.read().strip()
    except OSError:
        # Not the instructor (a learner's nbgrader command reading this file): nothing to grade,
        # so no secret is needed; autograde itself warns when the secret is empty.
        pass
# Without a GPU a speed cell cannot measure anything; what it is worth is the instructor's call:
# "zero" (no points without a GPU) or "full" (its points when the correctness checks pass, e.g.
# when grading only correctness on CPUs). AAG_SPEED_WITHOUT_GPU, when set, overrides this.
c.JudgeSubmission.speed_without_gpu = "zero"

# Late work (after the due date `aag release ASSIGNMENT --due ...` set): 10% of a notebook's points
# off per day or part of a day late, shown in the learner's feedback and in the exported grades.
# 100 makes late work score zero; an extension recorded in the gradebook moves that learner's due
# date. The penalty is fixed when autograde runs. A learner who submits again before you collect is
# graded on the last submission: `aag collect` runs nbgrader collect --update.
c.AssignLatePenalties.plugin_class = LatePenalty
c.LatePenalty.percent_per_day = 10
c.LatePenalty.grace_minutes = 0

# A learner who deletes a test cell must not escape it: autograde puts missing grade cells back.
c.OverwriteCells.add_missing_cells = True

# --- Solutions -----------------------------------------------------------------------------------
# nbgrader's default executes the solution notebooks (outputs would differ between machines, so
# `aag build` would never be reproducible, and it would need a GPU or minutes of simulator) and
# keeps hidden tests (the solutions are shared more widely than the gradebook). So: no Execute,
# and hidden test regions cleared as in the learner's release.
c.GenerateSolution.preprocessors = [
    IncludeHeaderFooter,
    LockCells,
    ClearOutput,
    ClearMarkScheme,
    ClearHiddenTests,
]

# --- Feedback ------------------------------------------------------------------------------------
# Autograding restores hidden tests into the graded notebook, and feedback renders it as is:
# HideHiddenTests replaces their code (and traceback lines quoting it) before the HTML is made.
# After GetGrades (which reads the notebook as graded), before the HTML styling step.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    HideHiddenTests,
    HideModelAnswers,
    ScrubGraderPaths,
    CSSHTMLHeaderPreprocessor,
]
# Tracebacks name the grading machine's folders (its Python, this course folder, your home): the
# learner's feedback shows <python>, <environment>, <course> and ~ instead.
c.ScrubGraderPaths.course_root = COURSE_ROOT

# `nbgrader export`: nbgrader's CSV columns, then one column per graded cell (an exercise's test,
# its speed test, a written answer), so a spreadsheet shows which exercises a learner passed.
c.ExportApp.plugin_class = PerExerciseCsvExportPlugin
