"""JudgeSubmission: the verdict of every course check comes from the judge, not the learner's kernel.

Runs after Execute and before SaveAutoGrades. For each grade cell that calls the course's checks it
asks :mod:`autograder.judge` for a verdict, made from a fresh sandboxed run of the submission's
code with secret-seeded inputs and compared in a process that never ran learner code, and writes
it into the cell as its only output: a passing verdict as text, a failing one as an error (which is
what nbgrader scores as zero). Whatever those cells printed or raised in the learner's kernel is
discarded. Grade cells that make no course check keep their kernel's result.

For the instructor, the judge's details (timings, launch counts, flags such as a speed above the
memory system's limit or code that reaches into the harness) go to the log and to ``judge.json``
beside the autograded notebook; feedback shows only the verdicts.

The autograded folder is where nbgrader's kernel ran the learner's code, so it may hold links (to
``.aag/secret``, ``gradebook.db``, ``source/``), FIFOs or hard links. This step runs after Execute
has shut the kernel down: before anything reads or writes the folder it removes every link,
special file and hard-linked file in it (listed in each cell's flags in ``judge.json``), so the
judge's copy, ``judge.json``, the graded notebook nbgrader writes next, nbgrader's chmod of every
file and the feedback copy of its files all touch plain files only. ``judge.json`` itself is
written through a new file renamed over the name (never through a link).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Tuple

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode, from_dict
from traitlets import CaselessStrEnum, Float, Integer, List, Unicode

from nbgrader.preprocessors import NbGraderPreprocessor


class JudgeSubmission(NbGraderPreprocessor):
    """Replace the outputs of course-check grade cells by the judge's verdicts."""

    secret_seed = Unicode("", help="The instructor's secret mixed into every hidden case. Keep it "
                          "out of the learners' reach (nbgrader_config.py reads it from "
                          ".aag/secret, made on first use)").tag(config=True)
    sandbox = CaselessStrEnum(["require", "auto", "off"], default_value="require",
                              help="require: refuse to grade without a sandbox; auto: sandbox "
                              "when possible; off: learner code runs with your rights").tag(config=True)
    protected_paths = List(Unicode(), help="Folders learner code must never see (the course root "
                           "if empty)").tag(config=True)
    exec_timeout = Float(300.0, help="Seconds the cells before one exercise may take").tag(config=True)
    memory_limit_gb = Float(8.0, help="Resident memory a student process may use").tag(config=True)
    max_processes = Integer(64, help="Processes a student process's tree may hold at once (the "
                            "sandbox's two included)").tag(config=True)
    speed_without_gpu = CaselessStrEnum(["zero", "full", "defer"], default_value="zero",
                                        help="What a speed cell is worth when grading without a "
                                        "GPU (full: only if the correctness checks pass; defer: "
                                        "zero until `aag grade-all ASSIGNMENT --speed-only` grades "
                                        "it again on a GPU machine); the environment variable "
                                        "AAG_SPEED_WITHOUT_GPU overrides it").tag(config=True)
    speed_calls = Integer(20, help="Timed calls per speed test (after 3 warm-up calls)").tag(config=True)
    copy_max_files = Integer(2000, help="Files and folders the judge copies from a submission's "
                             "folder for its student process; a folder with more fails the "
                             "exercise, saying so").tag(config=True)
    copy_max_bytes = Integer(256 << 20, help="Bytes the judge copies from a submission's folder; "
                             "a folder with more fails the exercise, saying so").tag(config=True)

    def _settings(self):
        from autograder.grading.judge import Settings
        from autograder.core.spec import speed_without_gpu
        protected = self.protected_paths or [os.getcwd()]
        if not self.secret_seed:
            self.log.warning("JudgeSubmission.secret_seed is empty: hidden inputs use a random "
                             "seed for this run")
        return Settings(secret=self.secret_seed, sandbox=self.sandbox,
                        protected=tuple(Path(p).resolve() for p in protected),
                        exec_timeout=self.exec_timeout,
                        memory_bytes=int(self.memory_limit_gb * 2**30),
                        max_processes=self.max_processes,
                        speed_without_gpu=speed_without_gpu("autograde", self.speed_without_gpu),
                        speed_calls=self.speed_calls, copy_max_files=self.copy_max_files,
                        copy_max_bytes=self.copy_max_bytes)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> Tuple[NotebookNode, ResourcesDict]:
        from autograder.grading import judge, safe_files

        folder = Path(resources.get("metadata", {}).get("path") or os.getcwd())
        who = resources.get("nbgrader", {}).get("student", "?")
        # No learner code runs in this folder any more (Execute shut its kernel down): remove the
        # links, special files and hard links it may have left, before the judge copies the
        # folder and before nbgrader writes the graded notebook, chmods and copies files here.
        settings = self._settings()
        # How long nbgrader's kernel let each cell run (ExecuteGuarded): the judge's cells get as long.
        settings.cell_limits = resources.get("aag_cell_limits")
        notebook = str(resources.get("unique_key") or "") + resources.get("output_extension", ".ipynb")
        removed: list = []
        if resources.get("metadata", {}).get("path") and not any(
                folder.resolve() == p or folder.resolve() in p.parents for p in settings.protected):
            removed = safe_files.clean_folder(folder, free=("judge.json", notebook))
        else:   # never "clean" the course root itself (its virtual environment holds links)
            self.log.warning("JudgeSubmission: %s is not a submission's folder; not cleaned", folder)
        if removed:
            self.log.warning("Removed from %s's folder before grading (made during Execute): %s",
                             who, "; ".join(removed))
        self._say_what_speed_cells_get(nb, resources, settings)
        from autograder.core.progress import Progress
        with Progress(judge.progress_steps(nb), f"judging {who}", log=self.log.info,
                      delay=0, interval=0) as bar:
            results = judge.judge_notebook(nb, settings, files_from=folder,
                                           progress=bar.begin)
        report = {}
        for index, grade_id, _ in judge.grade_cells(nb):
            result = results[grade_id]
            outputs = [judge.stream_output(result.text())] if result.lines else []
            if not result.passed:
                outputs.append(judge.error_output(result.error))
            nb.cells[index].outputs = [from_dict(o) for o in outputs]
            for flag in result.flags:
                self.log.warning("Judge flag for %s, %s: %s", who, grade_id, flag)
            flags = result.flags + [f"the notebook's folder held {what}"
                                    for what in safe_files.summarize(removed)]
            report[grade_id] = {"passed": result.passed, "verdicts": result.lines,
                                "error": result.error, "flags": flags,
                                "seconds": round(result.seconds, 2), "details": result.details}
        safe_files.write_file(folder, "judge.json",
                              json.dumps(report, indent=1, default=str).encode())
        return nb, resources

    _told: set = set()      # assignments whose speed notice this process has given

    def _say_what_speed_cells_get(self, nb: NotebookNode, resources: ResourcesDict, settings) -> None:
        """Once per assignment and process, without a GPU: what the speed cells will be worth."""
        from autograder.grading import judge
        assignment = resources.get("nbgrader", {}).get("assignment", "this assignment")
        if judge.on_gpu() or assignment in JudgeSubmission._told:
            return
        speed = [(grade_id, float(nb.cells[index].metadata["nbgrader"].get("points", 0)))
                 for index, grade_id, checks in judge.grade_cells(nb)
                 if any(c.kind == "check_speed" for c in checks)]
        if not speed:
            return
        JudgeSubmission._told.add(assignment)
        from autograder.core.spec import what_speed_cells_get
        points = sum(p for _, p in speed)
        worth = what_speed_cells_get(settings.speed_without_gpu, assignment)
        self.log.warning(
            "No GPU on this grader: the %g speed points of each %s submission (%s) will %s. "
            "Choose with c.JudgeSubmission.speed_without_gpu or AAG_SPEED_WITHOUT_GPU "
            "(zero, full, defer), or grade on a GPU machine", points, assignment,
            ", ".join(g for g, _ in speed), worth)
