"""The judge: grades a notebook's exercises from outside the learner's process.

For every grade cell that calls the course's checks (``ag.problems.ch02.vector_add.check(f)``,
``check_hidden``, ``check_speed``), in notebook order, the judge

1. has a student process (:mod:`autograder.grading.runner`) in the sandbox run the notebook's
   non-test code cells that come before that grade cell: one process for the whole notebook,
   running on from one grade cell to the next (:class:`Session`), started afresh after a crash;
2. makes the cases itself: visible ones from the public seed, hidden ones from the instructor's
   secret mixed with the exercise's name (the student process never holds the secret);
3. sends each case's inputs, receives the raw outputs, and compares them here with the float64
   spec (the student process never holds an expected result);
4. on a GPU, for speed cells: times the learner's code there on a rotating pool of inputs, checks
   a sample of every timed call's output chosen after the call returned, times the course's
   reference and the copy ceiling in this process with the same plan, and flags results faster
   than the memory system allows; the GPU is held under an exclusive lock meanwhile.

A crash, ``os._exit``, a hang, an illegal memory access or a huge allocation fails only that
exercise (the next one starts a fresh student process); the verdict says so in plain words. Used by the nbgrader preprocessor
:class:`autograder.nbgrader_ext.JudgeSubmission` at autograde, and by ``aag grade`` for self-study.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from autograder.grading import safe_files, sandbox, speed
from autograder.core.checks import GUARD, Outcome, Verdict, describe_exception, is_poison
from autograder.core.spec import stable_seed
from autograder.grading.problem import PROVENANCE_HINT, with_provenance
from autograder.grading.runner import encode_scalars, problem_by_path, speed_inputs

CHECK_KINDS = ("check", "check_hidden", "check_speed")
FLAG_LINE = "⚑ flagged for your instructor to read:"
SKIPPED_ERRORS = ("CellTimeoutError", "DeadKernelError")   # recorded by ExecuteGuarded
SAMPLE = 4096            # output elements checked after every timed call
MAX_OUTPUT_FILE = 8 << 30
# Tools that reach into the harness from inside the student's process: not forbidden (a learner
# may have reasons), but flagged for the instructor, since they are how a submission would tamper.
SUSPICIOUS = {
    r"\bctypes\b": "ctypes (raw memory access)",
    r"\bgc\.get_(objects|referrers)\b": "gc object walking",
    r"sys\._getframe|inspect\.(stack|currentframe)|\.f_back\b|\.f_locals\b": "frame inspection",
    r"__code__|__globals__|__closure__": "rewriting function objects",
    r"set_custom_exc|sys\.excepthook|showtraceback": "changing how errors are shown",
    r"cudadrv|perf_counter\s*=|\.elapsed_time\s*=|(event|synchronize)\s*=": "patching timers or "
        "the CUDA driver layer",
    r"inspect\.getsource": "reading source code through inspect",
    r"AAG_SECRET|gradebook|nbgrader_config": "looking for the grader's secrets or files",
    r"autograder\.(runner|judge|checks|problem|grading|core|machine\.simulator)\b|\bProblem\.|"
    r"\.(check|check_hidden|check_speed)\s*=":
        "touching the course's checking code",
    # (the AST pass in flags_in covers these and more; the regexes are for cells that do not parse)
    r"cell_contents|\bgc\b\s*\.|__dict__\s*\[|__class__\s*=": "closure, gc or object rewriting",
    r"\._ary\b|\._item\b|cuda\.simulator": "the CUDA simulator's internals",
    r"sys\.(modules|meta_path|path_hooks)|importlib|__import__": "changing how modules are imported",
    r"\bsetattr\s*\(|\bdelattr\s*\(": "patching objects (setattr)",
    r"inputs-|\.npz\b|judge\.json|\.aag\b": "looking for the grader's files or secrets",
}


@dataclass
class CheckCall:
    problem: str        # "ch02.vector_add"
    kind: str           # check | check_hidden | check_speed
    func: str           # the learner's name passed to it


def parse_checks(source: str) -> list[CheckCall]:
    """The course checks a grade cell makes, in order (other statements are not the judge's)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in CHECK_KINDS and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)):
            continue
        chain, target = [], node.func.value
        while isinstance(target, ast.Attribute):
            chain.append(target.attr)
            target = target.value
        chain.reverse()   # e.g. ["problems", "ch02", "vector_add"] after the package alias
        if len(chain) >= 3 and chain[-3] == "problems":
            calls.append(CheckCall(f"{chain[-2]}.{chain[-1]}", node.func.attr, node.args[0].id))
    calls.sort(key=lambda c: CHECK_KINDS.index(c.kind))
    return calls


def flags_in(source: str) -> list[str]:
    """What in the learner's cells reaches into the harness, for the instructor: an AST pass
    (:class:`_Flagger`) over the cells (IPython magics turned into Python first); the regexes of
    ``SUSPICIOUS`` for text that does not parse. Flags, not failures: these tools have legitimate
    uses, and the provenance checks, not the flags, decide a grade."""
    try:
        tree = ast.parse(_plain_python(source))
    except (SyntaxError, ValueError):
        return [what for pattern, what in SUSPICIOUS.items() if re.search(pattern, source)]
    flagger = _Flagger()
    flagger.visit(tree)
    return flagger.flags


def _plain_python(source: str) -> str:
    """The cells as Python: a cell magic's first line dropped (its body is analysed, not turned
    into a string argument that would hide it), line magics and shell escapes as IPython turns
    them into calls."""
    source = "\n".join("" if line.lstrip().startswith("%%") else line
                       for line in source.splitlines())
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    return TransformerManager().transform_cell(source)


# Modules whose objects a submission must not patch (assignment to their attributes, setattr).
_GUARDED_MODULES = {"numba", "numpy", "autograder", "time", "sys", "builtins", "os", "threading",
                    "IPython", "importlib", "gc"}
_DEFAULT_ALIASES = {"np": "numpy", "numpy": "numpy", "numba": "numba", "cuda": "numba",
                    "autograder": "autograder", "ag": "autograder"}
# attribute -> what it is used for, flagged wherever it is read or written
_ATTRIBUTES = {
    "_getframe": "frame inspection (sys._getframe)", "f_back": "frame inspection (f_back)",
    "f_locals": "frame inspection (f_locals)", "f_globals": "frame inspection (f_globals)",
    "tb_frame": "frame inspection (tb_frame)", "gi_frame": "frame inspection (gi_frame)",
    "currentframe": "frame inspection (inspect.currentframe)",
    "stack": None,   # only as inspect.stack, below
    "__closure__": "closure access (__closure__)", "cell_contents": "closure access (cell_contents)",
    "__code__": "rewriting function objects (__code__)",
    "__globals__": "reaching a function's globals (__globals__)",
    "__subclasses__": "walking the class hierarchy (__subclasses__)",
    "__builtins__": "changing builtins (__builtins__)",
    "get_objects": "gc object walking", "get_referrers": "gc object walking",
    "get_referents": "gc object walking",
    "_ary": "the CUDA simulator's internals (_ary: a device array's host data)",
    "_item": "the CUDA simulator's internals (_item)",
    "_kernel_context": "the CUDA simulator's internals (_kernel_context)",
    "getsource": "reading source code through inspect",
    "settrace": "tracing the interpreter (settrace)", "setprofile": "tracing (setprofile)",
    "meta_path": "changing how modules are imported (sys.meta_path)",
    "path_hooks": "changing how modules are imported (sys.path_hooks)",
    "modules": None,     # only as sys.modules, below
    "excepthook": "changing how errors are shown", "set_custom_exc": "changing how errors are shown",
    "showtraceback": "changing how errors are shown",
    "cudadrv": "the CUDA driver layer (numba.cuda.cudadrv)",
    "input_transformers_post": "changing how cells run (IPython input transformers)",
    "input_transformers_cleanup": "changing how cells run (IPython input transformers)",
    "ast_transformers": "changing how cells run (IPython AST transformers)",
    "simulator": "the CUDA simulator's internals (numba.cuda.simulator)",
}
_MODULES = {"ctypes": "ctypes (raw memory access)", "gc": "gc (object walking)",
            "inspect": "inspect (frames, source)", "importlib": "importlib (module manipulation)",
            "_ctypes": "ctypes (raw memory access)", "cffi": "cffi (raw memory access)"}
_FILE_WORDS = ("inputs-", ".npz", "judge.json", ".aag", "gradebook", "outputs-", "sample-",
               "student-output", "nbgrader_config", "AAG_SECRET", "aag-judge")
# the checking code's modules by their old names (autograder.judge, still importable) and the
# layers that hold it now (autograder.grading.judge, autograder.core.checks)
_COURSE_CODE = ("runner", "judge", "checks", "problem", "provenance", "races", "sandbox",
                "grading", "core", "speed", "safe_files")


class _Flagger(ast.NodeVisitor):
    """The static pass: names what a cell does that reaches into the harness (see flags_in)."""

    def __init__(self):
        self.flags: list[str] = []
        self.aliases = dict(_DEFAULT_ALIASES)     # local name -> guarded module it stands for

    def flag(self, what: str, node=None) -> None:
        where = ""
        if node is not None and hasattr(node, "lineno"):
            try:
                text = ast.unparse(node)
            except Exception:   # noqa: BLE001 - unparse is best effort
                text = ""
            where = f" (line {node.lineno}" + (f": `{text[:60]}`" if text else "") + ")"
        entry = what + where
        if not any(f.startswith(what) for f in self.flags):   # one line per kind of thing
            self.flags.append(entry)

    def _root(self, node):
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            node = node.func if isinstance(node, ast.Call) else node.value
        return node.id if isinstance(node, ast.Name) else None

    def _import(self, module: str, node) -> None:
        top = module.split(".")[0]
        if top in _MODULES:
            self.flag(_MODULES[top], node)
        if module.startswith("numba.cuda.simulator"):
            self.flag(_ATTRIBUTES["simulator"], node)
        if module.startswith("numba.cuda.cudadrv"):
            self.flag(_ATTRIBUTES["cudadrv"], node)
        parts = module.split(".")
        if top == "autograder" and len(parts) > 1 and (
                parts[1] in _COURSE_CODE or parts[1:3] == ["machine", "simulator"]):
            self.flag("touching the course's checking code", node)

    def visit_Import(self, node):
        for a in node.names:
            self._import(a.name, node)
            top = a.name.split(".")[0]
            if top in _GUARDED_MODULES:
                self.aliases[(a.asname or a.name).split(".")[0]] = top
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        self._import(module, node)
        top = module.split(".")[0]
        for a in node.names:
            self._import(f"{module}.{a.name}", node)
            if top in _GUARDED_MODULES:
                self.aliases[a.asname or a.name] = top
        self.generic_visit(node)

    def visit_Attribute(self, node):
        what = _ATTRIBUTES.get(node.attr)
        root = self._root(node)
        if what:
            self.flag(what, node)
        elif node.attr == "stack" and root == "inspect":
            self.flag("frame inspection (inspect.stack)", node)
        elif node.attr == "modules" and root == "sys":
            self.flag("changing or reading loaded modules (sys.modules)", node)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            if node.attr in ("__dict__", "__class__", "__code__", "__defaults__", "__kwdefaults__"):
                self.flag(f"rewriting an object's {node.attr}", node)
            elif root in self.aliases:
                self.flag(f"patching {self.aliases[root]} objects (an attribute of `{root}` "
                          "assigned)", node)
            elif isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                    and node.value.func.id == "type":
                self.flag("patching a class (an attribute of type(...) assigned)", node)
        if node.attr in _COURSE_CODE and root in self.aliases and \
                self.aliases[root] == "autograder" and isinstance(node.value, ast.Name):
            self.flag("touching the course's checking code", node)
        self.generic_visit(node)

    def visit_Assign(self, node):
        # ``p = ag.problems.ch28.ring_allreduce``: p stands for a guarded module's object too,
        # so ``p.launch = fake`` is flagged as patching it
        root = self._root(node.value) if isinstance(node.value, (ast.Attribute, ast.Subscript,
                                                                 ast.Name)) else None
        if root in self.aliases:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.aliases[target.id] = self.aliases[root]
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "__dict__":
            self.flag("rewriting an object's __dict__", node)
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else "")
        if name in ("setattr", "delattr", "__setattr__", "__delattr__"):
            self.flag(f"patching objects ({name})", node)
        elif name in ("__import__", "import_module", "reload"):
            self.flag("importing or reloading modules by name", node)
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            for word in _FILE_WORDS:
                if word in node.value:
                    self.flag("looking for the grader's files or secrets", node)
                    break
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in ("__builtins__",):
            self.flag(_ATTRIBUTES["__builtins__"], node)
        self.generic_visit(node)


@dataclass
class Settings:
    secret: str = ""                    # the instructor's secret; empty: a random one per run
    sandbox: str = "auto"               # "require", "auto" (use it when it works), "off"
    protected: tuple[Path, ...] = ()    # never visible to learner code
    exec_timeout: float = 300.0         # seconds for the cells before an exercise
    cell_limits: dict | None = None     # seconds each cell may take, by id (ExecuteGuarded's)
    memory_bytes: int = 8 << 30         # resident memory of the student process
    copy_max_files: int = 2000          # files copied from the submission's folder (more: fails)
    copy_max_bytes: int = 256 << 20     # bytes copied from the submission's folder (more: fails)
    max_processes: int = 64             # processes in the student process's tree (sandbox.MAX_PROCESSES)
    speed_without_gpu: str = "zero"     # a speed cell's worth without a GPU (problem.speed_without_gpu)
    speed_calls: int = 20               # timed calls (after 3 warm-up calls)
    gpu_lock_dir: Path = Path(tempfile.gettempdir())
    progress: Callable[[str], None] | None = None   # told what a long speed test is doing
    allow_triton: bool = False          # the notebook has a Triton exercise: Triton imports

    def __post_init__(self):
        if not self.secret:
            self.secret = secrets.token_hex(16)


@dataclass
class CellResult:
    grade_id: str
    passed: bool
    lines: list[str] = field(default_factory=list)    # feedback, one verdict per line
    error: str = ""                                    # the failing verdict (feedback)
    flags: list[str] = field(default_factory=list)     # for the instructor only
    details: dict = field(default_factory=dict)        # timings, counts (for the instructor)
    seconds: float = 0.0

    def text(self) -> str:
        return "\n".join(self.lines)


class StudentProcess:
    """One sandboxed runner, spoken to over pipes; ended by :meth:`close` or its watchdog."""

    def __init__(self, settings: Settings, files_from: Path | None, backend: str | None = None,
                 extra_env: dict[str, str] | None = None):
        self.dir = Path(tempfile.mkdtemp(prefix="aag-judge-"))
        self.work = self.dir / "work"
        # The submission's folder was written by learner code: copied without following links,
        # without FIFOs or devices, and within caps (safe_files.copy_tree says why). Skipped
        # links are listed in copy_report; a folder over a cap fails the exercise, saying so.
        self.copy_report = safe_files.CopyReport()
        if files_from is not None and files_from.is_dir():
            try:
                self.copy_report = safe_files.copy_tree(
                    files_from, self.work, max_files=settings.copy_max_files,
                    max_bytes=settings.copy_max_bytes)
            except safe_files.CopyLimitExceeded as exc:
                shutil.rmtree(self.dir, ignore_errors=True)
                raise StudentGone(
                    f"the submission's folder holds {exc}, more than the grader copies for your "
                    "code to run with (limits: c.JudgeSubmission.copy_max_files and "
                    "copy_max_bytes); move large or generated files out of the notebook's "
                    "folder") from None
        else:
            self.work.mkdir()
        os.chmod(self.dir, 0o700)
        # -P: the working folder is not put first on sys.path, so a learner's file named
        # numpy.py or autograder.py cannot replace what the harness imports (the runner adds the
        # folder at the end once the harness is set up, for the learner's own helper modules).
        # -c, not -m: the package's import already loads the runner module, and -m would run a
        # second copy of it as __main__ (two sets of the harness's state)
        argv = [sys.executable, "-P", "-c", "from autograder.grading.runner import main; main()"]
        env = {"AAG_GRADING": "judge", "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
        from autograder.machine import device
        env["AAG_BACKEND"] = backend or device.current().name
        if settings.allow_triton:
            from autograder.grading.runner import ALLOW_TRITON_ENV
            env[ALLOW_TRITON_ENV] = "1"
        env.update(extra_env or {})
        self.sandboxed = sandbox.use(settings.sandbox, "c.JudgeSubmission.sandbox")
        popen: dict = {}
        if self.sandboxed:
            policy = sandbox.Policy(workdir=self.work, protected=settings.protected, env=env)
        else:   # a plain child: same environment minus the secret, the package importable
            policy = None
            plain = {k: v for k, v in os.environ.items() if not k.startswith("AAG_SECRET")}
            plain["PYTHONPATH"] = os.pathsep.join(
                [str(Path(__file__).resolve().parents[2]), plain.get("PYTHONPATH", "")])
            popen = {"cwd": self.work, "env": {**plain, **env}}
        self.proc = sandbox.Supervised(argv, policy, timeout=settings.exec_timeout,
                                       memory_bytes=settings.memory_bytes,
                                       max_processes=settings.max_processes, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)

    def send(self, obj: dict) -> None:
        self.proc.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.proc.stdin.flush()

    def receive(self, expect: str) -> dict:
        line = self.proc.proc.stdout.readline()
        if not line:
            raise StudentGone(self._why_gone())
        try:
            msg = json.loads(line)
        except ValueError:
            raise StudentGone("the student process answered with something unreadable (did the "
                              "code write to the grader's channel?)") from None
        if msg.get("op") != expect:
            raise StudentGone(f"the student process answered {msg.get('op')!r} out of turn")
        return msg

    def ask(self, obj: dict, expect: str, allow: float) -> dict:
        """Send a request and wait for its answer; the process is stopped after ``allow`` s."""
        self.begin(obj, allow)
        return self.receive(expect)

    def begin(self, obj: dict, allow: float) -> None:
        """Send a request whose answer :meth:`receive` reads later (meanwhile this process may
        work); the student process is stopped if it has not answered within ``allow`` s."""
        self.proc.deadline_in(allow)
        try:
            self.send(obj)
        except (BrokenPipeError, OSError):
            raise StudentGone(self._why_gone()) from None

    def _why_gone(self) -> str:
        code = self.proc.close()
        if self.proc.killed == "time":
            limit = self.proc.budget.seconds
            return (f"it ran past its time limit ({limit:.3g} s of processor time, or "
                    f"{sandbox.backstop(limit):.3g} s waiting) and was "
                    "stopped (an endless loop, a deadlock, or far too slow?)")
        if self.proc.killed == "memory":
            return (f"it used more than {self.proc.memory_bytes / 2**30:.0f} GiB of memory and was "
                    "stopped (a huge allocation?)")
        if self.proc.killed == "processes":
            return (f"it started more than {self.proc.max_processes} processes at once and was "
                    "stopped (processes started in a loop?)")
        signal_number = -code if code is not None and code < 0 else (
            code - 128 if code is not None and 128 < code < 160 else 0)   # bwrap reports 128+N
        if signal_number:
            import signal
            try:
                name = signal.Signals(signal_number).name
            except ValueError:
                name = str(signal_number)
            return (f"the process running your code crashed (signal {name}"
                    + (": a memory access outside what it owns" if name == "SIGSEGV" else "") + ")")
        tail = self.output_tail()
        return (f"the process running your code ended (exit status {code}) before answering"
                + (": something called exit()?" if code == 0 else "") + (f"\n{tail}" if tail else ""))

    def output_tail(self, limit: int = 1500) -> str:
        try:
            err = self.proc.proc.stderr.read().decode(errors="replace") if self.proc.proc.stderr else ""
        except (OSError, ValueError):
            err = ""
        return err[-limit:].strip()

    def load(self, name: str, max_bytes: int = MAX_OUTPUT_FILE) -> dict[str, np.ndarray]:
        """The arrays of an ``.npz`` the student process wrote into its folder (which it can
        write: the name may be a link or a FIFO by now, or a small archive that inflates to
        gigabytes); at most ``max_bytes`` once decompressed (safe_files.load_npz says how)."""
        try:
            return safe_files.load_npz(self.work, name, max_bytes=max_bytes,
                                       max_file=min(MAX_OUTPUT_FILE, max_bytes + (1 << 20)))
        except safe_files.UnsafeFile as exc:
            raise StudentGone(str(exc)) from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send({"op": "bye"})
        self.proc.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class StudentGone(Exception):
    """The student process died, hung or broke the protocol."""


# ---- judging one exercise ----------------------------------------------------------------------------

class Session:
    """One student process for a whole notebook: the exercises are judged in notebook order, and
    the process that ran the cells before one grade cell runs on into the next, executing only
    the cells in between, as a notebook's kernel does. Each exercise used to start a process of
    its own and re-run every cell above it (a chapter's demos once per exercise).

    What one exercise's grading leaves in the process cannot help a later one: its hidden inputs
    are its own (drawn from its own seed), and its verdict was taken in the judge's process
    before the next cells run. A process that died, hung or was stopped is not reused: the next
    exercise starts a fresh one and runs every cell above it again, so a crash costs one restart.
    Close it when done (``with Session() as session:``)."""

    def __init__(self):
        self.student: StudentProcess | None = None
        self.ran: list[dict] = []            # the cells run in it, in order
        self.cell_errors: list[dict] = []
        self.notes: list[str] = []           # the copy report of its folder (links skipped)
        self.started = 0                     # processes started: a crash or a hang restarts

    def take(self, cells: list[dict]) -> tuple[StudentProcess | None, list[dict]]:
        """The live process if it ran a prefix of ``cells``, and the cells it has still to run."""
        student, self.student = self.student, None
        if (student is not None and student.proc.proc.poll() is None and not student.proc.killed
                and cells[:len(self.ran)] == self.ran):
            return student, cells[len(self.ran):]
        if student is not None:
            student.close()
        self.ran, self.cell_errors, self.notes = [], [], []
        return None, cells

    def keep(self, student: StudentProcess, cells: list[dict]) -> None:
        self.student, self.ran = student, list(cells)

    def close(self) -> None:
        if self.student is not None:
            self.student.close()
            self.student = None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def judge_exercise(cells: list[dict], checks: list[CheckCall], settings: Settings,
                   grade_id: str = "", files_from: Path | None = None,
                   session: Session | None = None,
                   yardsticks: dict[str, Yardsticks] | None = None) -> CellResult:
    """Run ``cells`` (the non-test code before the grade cell) in a student process and judge
    every check of the grade cell: a fresh process, or the ``session``'s if it ran a prefix of
    ``cells`` (then only the rest run). ``yardsticks``: the speed checks' reference and copy
    timings by problem path, timed before any learner code ran (:func:`time_yardsticks`)."""
    result = CellResult(grade_id, True)
    source = "\n".join(c["source"] for c in cells)
    result.flags = flags_in(source)
    t0 = time.monotonic()
    if not on_gpu() and settings.speed_without_gpu == "full" and any(
            c.kind == "check_speed" for c in checks):
        # No GPU to time on, and speed is worth full marks here: if the code is right.
        speed = [c for c in checks if c.kind == "check_speed"]
        checks = [c for c in checks if c.kind != "check_speed"]
        checks += [CheckCall(c.problem, kind, c.func) for c in speed
                   for kind in ("check", "check_hidden")
                   if not any(k.problem == c.problem and k.kind == kind for k in checks)]
        checks += speed
    needs_run = any(c.kind != "check_speed" for c in checks) or on_gpu()
    own_session = session is None
    session = Session() if own_session else session
    student = None
    try:
        if needs_run:
            student, todo = session.take(cells)
            if student is None:
                student = StudentProcess(settings, files_from)
                session.started += 1
                session.notes = student.copy_report.notes()   # links or special files left behind
                hello = student.receive("hello")
                if hello.get("error"):
                    raise RuntimeError("the judge's student process failed to start:\n"
                                       + hello["error"])
            result.flags += session.notes
            t_cells = time.monotonic()
            executed = student.ask({"op": "exec", "cells": todo,
                                    "problems": sorted({c.problem for c in checks})}, "executed",
                                   allow=_cells_allowance(todo, settings))
            result.details["cells_seconds"] = round(time.monotonic() - t_cells, 2)
            result.details["processes_started"] = session.started
            session.cell_errors += executed["errors"]
            result.details["cell_errors"] = list(session.cell_errors)
            result.details["sandboxed"] = student.sandboxed
            result.details["cells_run"] = len(todo)
        for call in checks:
            problem = problem_by_path(call.problem)
            if call.kind == "check_speed":
                verdict = _judge_speed(student, problem, call, settings, result,
                                       (yardsticks or {}).get(call.problem))
            else:
                verdict = _judge_cases(student, problem, call, settings, result)
                if verdict.passed and call.kind == "check_hidden":
                    verdict = _judge_other_warp_sizes(cells, problem, call, settings, result,
                                                      files_from) or verdict
            if verdict.passed:
                result.lines.append(str(verdict))
            else:
                result.passed, result.error = False, str(verdict)
                break
            if student is not None and student.proc.proc.poll() is not None:
                student.close()
                student = None
    except StudentGone as gone:
        result.passed = False
        result.error = f"✗ {checks[0].problem.split('.')[1]}: {gone}"
        if student is not None:
            result.details["peak_rss_mib"] = round(student.proc.peak_rss / 2**20)
            student.close()
            student = None
    finally:
        if student is not None:
            # for the instructor: the most memory the process and its children held so far
            result.details["peak_rss_mib"] = round(student.proc.peak_rss / 2**20)
            if student.proc.proc.poll() is None and not student.proc.killed:
                session.keep(student, cells)
            else:
                student.close()
        if own_session:
            session.close()
    result.seconds = time.monotonic() - t0
    return result


def _cells_allowance(cells: list[dict], settings: Settings) -> float:
    """Processor seconds the student process may take for ``cells``: what nbgrader's kernel gave
    each of them (a multiple of the solution's time, :mod:`cell_limits`), at most exec_timeout."""
    limits = settings.cell_limits
    if not limits:
        return settings.exec_timeout
    other = max(limits.values())
    return min(settings.exec_timeout, sum(limits.get(c["id"], other) for c in cells) or other)


def _judge_other_warp_sizes(cells, problem, call: CheckCall, settings: Settings,
                            result: CellResult, files_from: Path | None) -> Verdict | None:
    """For an exercise that asks for warp-size-portable code (``portable_warp_sizes``), graded on a
    GPU: a GPU runs one warp size only, so the hidden cases at the other warp sizes run in a
    second student process in CPU mode (the simulator with ``AAG_WARP_SIZE``), same cells. None
    when there is nothing to add (CPU mode already ran every warp size)."""
    if not (on_gpu() and problem.portable_warp_sizes):
        return None
    from autograder.machine import device
    here = int(device.current().warp_size)
    verdict = None
    for warp in [w for w in problem.portable_warp_sizes if w != here]:
        cases = problem.portability_cases(
            warp, seed=stable_seed(problem.name, settings.secret, "warp", str(warp)))
        student = StudentProcess(settings, files_from, backend="cpu",
                                 extra_env={"AAG_WARP_SIZE": str(warp)})
        try:
            hello = student.receive("hello")
            if hello.get("error"):
                raise RuntimeError("the judge's CPU-mode student process failed to start:\n"
                                   + hello["error"])
            t_warp = time.monotonic()
            student.ask({"op": "exec", "cells": cells, "problems": [call.problem]}, "executed",
                        allow=settings.exec_timeout)
            verdict = _judge_cases(student, problem, call, settings, result, cases=cases)
        finally:
            student.close()
        result.details.setdefault("other_warp_sizes_seconds", []).append(
            round(time.monotonic() - t_warp, 2))
        result.details.setdefault("other_warp_sizes", []).append(warp)
        if not verdict.passed:
            verdict.hint = (f"(run at warp size {warp} in CPU mode by the grader: a GPU has one "
                            "warp size, and this exercise asks for code that works at any) "
                            + (verdict.hint or ""))
            return verdict
    if verdict is not None:
        verdict.message += f", and again at warp size {', '.join(map(str, result.details['other_warp_sizes']))} in CPU mode"
    return verdict


def _cases(problem, call: CheckCall, settings: Settings):
    if call.kind == "check_hidden":
        return problem.cases(hidden=True, seed=stable_seed(problem.name, settings.secret, "hidden"))
    return problem.cases(hidden=False)


def _judge_cases(student: StudentProcess, problem, call: CheckCall, settings: Settings,
                 result: CellResult, cases=None) -> Verdict:
    hidden = call.kind == "check_hidden"
    lap = _Laps()
    result.details.setdefault("check_seconds", {})[call.kind] = lap.seconds   # filled as it goes
    cases = _cases(problem, call, settings) if cases is None else cases
    lap("making the cases")
    if result.flags and not any(line.startswith(FLAG_LINE) for line in result.lines):
        # The feedback names what the static pass flagged (details in judge.json): a reason for
        # the instructor to read the code, not a verdict.
        result.lines.append(f"{FLAG_LINE} {'; '.join(f.split(' (line')[0] for f in result.flags)}")
    launches, copies = [], []
    progress = settings.progress or (lambda text: None)
    for i, case in enumerate(cases):
        progress(f"{call.kind.replace('_', ' ')}, case {i + 1} of {len(cases)}")
        arrays, scalars = encode_scalars(case.inputs)
        name = f"inputs-{call.kind}-{i}.npz"
        safe_files.save_npz(student.work, name, arrays)   # never through a link it left there
        lap("sending the inputs")
        limit = problem.time_limit(case)
        try:
            student.begin({"op": "case", "problem": call.problem, "func": call.func,
                           "size": case.size, "blocks": case.blocks, "threads": case.threads,
                           "inputs": name, "scalars": scalars, "order": list(case.inputs)},
                          allow=limit)
            problem.reference_values(case)   # the float64 answer, while the learner's code runs
            lap("the expected values (while your code runs)")
            msg = student.receive("outcome")
            lap("your code, after that")
            outcome = Outcome(outputs=student.load(msg["outputs"], safe_files.npz_bytes(
                                  problem.outputs(case.size))), guard_intact=msg["guard_intact"],
                              error=msg["error"], error_kind=msg["error_kind"])
            outcome.provenance = msg.get("provenance")   # judged after the values
            lap("receiving the outputs")
        except StudentGone as gone:
            # Stopped at its time limit: a hang (its hint says so), not a crash.
            stopped = getattr(getattr(student, "proc", None), "killed", None) == "time"
            outcome = Outcome(error=str(gone), error_kind="hang" if stopped else "crash")
            msg = {}
        verdict = with_provenance(problem, case, outcome,
                                  problem.judge(case, outcome, show_inputs=not hidden))
        case.memo.clear()                 # the float64 answer of a large case: hundreds of MB
        lap("comparing")
        launches.append(msg.get("student_launches", 0))
        copies.append(msg.get("d2h", 0))   # for the instructor: inputs copied back to the host?
        if verdict.passed and problem.on_device and outcome.error is None:
            verdict = _launch_verdict(problem, case, msg) or verdict
        if verdict.passed and not problem.on_device and msg.get("course_calls"):
            verdict = Verdict(problem.name, False, case.describe(),
                              "the answer is right, but it came from the course's own code "
                              f"({'; '.join(msg['course_calls'][:3])}), not from yours",
                              "write the computation in your own function: the exercise is "
                              "the formula, and the course's functions that know the answer "
                              "are not yours to call.")
        if not verdict.passed:
            verdict.cases_run = i + 1
            if hidden:
                verdict.problem += " (hidden tests)"
            if "(" not in verdict.case and outcome.error_kind == "crash":
                verdict.hint = verdict.hint or describe_exception(outcome.error, "crash")
            return verdict
    result.details.setdefault("launches", {})[call.kind] = launches
    result.details.setdefault("copies_to_host", {})[call.kind] = copies
    plural = "s" * (len(cases) != 1)
    if hidden:
        return Verdict(problem.name, True, message=f"hidden tests ({len(cases)} case{plural})")
    return Verdict(problem.name, True, message=f"{len(cases)} case{plural} ({problem.sizes_text(cases)})")


def _launch_verdict(problem, case, msg: dict) -> Verdict | None:
    """A right answer must come from the learner's own kernel, not from a library, the host or the
    course's reference kernel."""
    foreign = msg.get("foreign_launches") or []
    if msg.get("student_launches", 0) == 0:
        why = (f"the kernel that ran was not yours ({', '.join(foreign)}, from a library or the "
               "course package)" if foreign else
               "no kernel of yours was launched: the result was computed some other way (on the "
               "host, or by a library)")
        decorator = "@triton.jit" if problem.kernel_language == "triton" else "@cuda.jit"
        return Verdict(problem.name, False, case.describe(), f"the output is right, but {why}",
                       f"the exercise is to write the kernel: launch your own `{decorator}` "
                       "function.")
    if foreign:
        # A kernel of the learner's ran, and so did one that is not (the course's reference, a
        # library's): on a GPU nothing tells which of them stored the answer, so the call fails.
        return Verdict(problem.name, False, case.describe(),
                       f"a kernel that is not yours ran during the call ({', '.join(foreign)}, from "
                       "the course package or a library)",
                       "compute the answer with your own kernels only.")
    # A second count, kept apart from the harness's list of launches (which learner code could
    # reach through the hook's closure and append to): the provenance recorder's launches of the
    # learner's kernel and stores by its threads (CPU mode), or the launches seen at numba's
    # compiled-kernel layer (GPU). A launch the harness saw must show up there too.
    prov = msg.get("provenance")
    if problem.on_device and "outputs" in msg or isinstance(case, _SpeedCase):
        if not isinstance(prov, dict):
            return Verdict(problem.name, False, case.describe(),
                           "the grader's record of this call is missing (was the harness "
                           "tampered with?)", "launch your own kernel; leave the grader alone.")
        if prov.get("learner_launches") == 0 or prov.get("driver_launches") == 0 or \
                prov.get("learner_stores") == 0:
            return Verdict(problem.name, False, case.describe(),
                           "the output is right, but no thread of your kernel stored it: the "
                           "launch the harness counted never ran (records of launches do not "
                           "compute anything)", PROVENANCE_HINT)
    return None


def on_gpu() -> bool:
    """Is the judge running on a GPU (speed can be timed)?"""
    from autograder.machine import device
    return device.current().is_gpu


# ---- speed ----------------------------------------------------------------------------------------------

def _size_text(problem, size) -> str:
    if isinstance(size, tuple):
        return problem.size_label(size) if problem.size_label else "shape " + " × ".join(map(str, size))
    return f"n = {size:,}"


@dataclass
class Yardsticks:
    """What a speed test sets the learner's time against, timed on this GPU: the course
    reference on the test's inputs and plan, and a copy of the same bytes."""
    reference_ms: float
    ceiling: Any                  # timing.Stats
    seconds: dict = field(default_factory=dict)


def _speed_plan(problem, settings: Settings):
    """(rng, nonce, plan) of a speed test: the inputs' seed and the (content set, buffer) of each
    call, drawn from the secret; the rng goes on to draw the sampled outputs of each call."""
    rng = np.random.default_rng(stable_seed(problem.name, settings.secret, "speed"))
    nonce = int(rng.integers(1 << 62))
    plan = [(int(rng.integers(SPEED_CONTENTS)), int(rng.integers(SPEED_BUFFERS)))
            for _ in range(SPEED_WARMUP + settings.speed_calls)]
    return rng, nonce, plan


SPEED_CONTENTS, SPEED_BUFFERS, SPEED_WARMUP = 3, 2, 3


class _Laps:
    """Seconds per named step of a speed test, for the instructor (judge.json): each call ends
    the step begun at the previous one; a name used again adds up."""

    def __init__(self, seconds: dict | None = None):
        self.seconds = dict(seconds or {})
        self._mark = time.monotonic()

    def __call__(self, name: str) -> None:
        now = time.monotonic()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._mark, 3)
        self._mark = now


def _time_yardsticks_on(problem, host: list[dict], plan, lap: _Laps,
                        progress: Callable[[str], None]) -> Yardsticks:
    """The course reference timed on ``host`` with the speed test's ``plan``, and the copy
    ceiling of the same bytes (the caller holds the GPU lock)."""
    from autograder.machine import timing
    size = problem.sizes.speed
    blocks, threads = problem.speed_shape(size)
    progress("timing the course reference")
    ref_ms = time_reference(problem, host, plan[SPEED_WARMUP:], size, blocks, threads)
    lap("course reference")
    progress("timing a copy of the same bytes")
    ceiling = timing.copy_ceiling(problem.bytes_moved(size))
    lap("copy ceiling")
    return Yardsticks(ref_ms, ceiling, lap.seconds)


def time_yardsticks(problem, settings: Settings) -> Yardsticks:
    """Time the course reference and the copy ceiling of ``problem``'s speed test now. The judge
    does it for every speed cell of a notebook before any of the notebook's code runs: no learner
    process is alive then, so nothing of theirs can share the GPU with these timings, and the
    student process does not have to be stopped for them after its own timed calls (which would
    cost the next exercise a new process and a re-run of every cell above it)."""
    _, nonce, plan = _speed_plan(problem, settings)
    lap = _Laps()
    with gpu_lock(settings.gpu_lock_dir):
        lap("waiting for the GPU")
        host = [speed_inputs(problem, nonce, c, problem.sizes.speed) for c in range(SPEED_CONTENTS)]
        lap("inputs for the reference")
        return _time_yardsticks_on(problem, host, plan, lap, lambda text: None)


def _judge_speed(student, problem, call: CheckCall, settings: Settings,
                 result: CellResult, yardsticks: Yardsticks | None = None) -> Verdict:
    """Time the learner's code on chip-filling inputs and judge it against the course reference
    (timed here, same plan) and the bar's CPU baseline. ``student`` is a sandboxed
    :class:`StudentProcess` at autograde, or a :class:`LocalStudent` in the learner's notebook.
    With ``yardsticks`` (timed before any learner code ran, :func:`time_yardsticks`) the student
    process only frees its buffers afterwards and goes on to the next exercise; without, it is
    stopped before the reference is timed here, so that nothing of the learner's runs beside it."""
    name = problem.name + " (speed)"
    if not on_gpu():
        if settings.speed_without_gpu == "full":
            return Verdict(problem.name, True, message="(speed: no GPU here; worth full marks when "
                                                       "the correctness checks pass)")
        if settings.speed_without_gpu == "defer":
            result.details["speed_deferred"] = True     # aag grade-all --speed-only finds it
            return Verdict(name, False, "no GPU", "not graded yet: this grader has no GPU, and "
                           "the instructor grades speed on one later", "")
        return Verdict(name, False, "CPU mode", "speed is graded only on a GPU, and this grader "
                       "has none", "the instructor grades speed only on a GPU.")
    bar = speed.speed_bar(problem)
    size = problem.sizes.speed
    where = _size_text(problem, size)
    blocks, threads = problem.speed_shape(size)
    out_count = int(np.prod(next(iter(problem.outputs(size).values()))[0]))
    rng, nonce, plan = _speed_plan(problem, settings)
    warmup = SPEED_WARMUP
    progress = settings.progress or (lambda text: None)
    lap = _Laps(yardsticks.seconds if yardsticks else None)
    with gpu_lock(settings.gpu_lock_dir):
        lap("waiting for the GPU")
        progress("making inputs")
        # The student process makes its copy of the inputs while this process makes its own.
        student.begin({"op": "speed_setup", "problem": call.problem, "size": size, "nonce": nonce,
                       "contents": SPEED_CONTENTS, "buffers": SPEED_BUFFERS}, allow=180)
        host = [speed_inputs(problem, nonce, c, size) for c in range(SPEED_CONTENTS)]
        student.receive("speed_ready")
        lap("inputs")
        yours, launched, streams = [], [], 0
        for i, (c, b) in enumerate(plan):
            progress(f"timed call {i + 1} of {len(plan)} (the first {warmup} are warm-up)")
            msg = student.ask({"op": "timed", "problem": call.problem, "func": call.func,
                               "size": size, "blocks": blocks, "threads": threads, "content": c,
                               "buffer": b}, "timed", allow=60)
            if msg["error"]:
                return Verdict(name, False, where, msg["error"].splitlines()[-1][:300],
                               describe_exception(msg["error"], "exception"))
            lap("timed calls")
            idx = _sample_indices(rng, out_count)
            sample = student.ask({"op": "sample", "buffer": b, "call": i, "idx": idx.tolist()},
                                 "sampled", allow=30)
            got = student.load(sample["file"], safe_files.npz_bytes(
                {k: ((idx.size,), dt) for k, (_, dt) in problem.outputs(size).items()}))
            wrong = _check_sample(problem, host[c], out_count, idx, got)
            lap("sample checks")
            if wrong:
                return Verdict(name, False, f"{where}, timed call {i + 1}", wrong,
                               "every timed call's output is checked: a kernel must do all of its "
                               "work on every call (no caching between calls, no skipped work).")
            verdict = _launch_verdict(problem, _SpeedCase(where), msg)
            if verdict is not None:
                verdict.problem = name
                return verdict
            streams += msg["streams"]
            launched.append(msg["student_launches"])
            if i >= warmup:
                yours.append(msg["ms"])
        if yardsticks is None:
            student.close()   # frees the GPU before the reference is timed in this process
            lap("closing the student process")
            yardsticks = _time_yardsticks_on(problem, host, plan, lap, progress)
        else:
            student.ask({"op": "speed_release"}, "speed_released", allow=60)
            lap("freeing the buffers")
        ref_ms, ceiling = yardsticks.reference_ms, yardsticks.ceiling
        del host
        progress("the CPU baselines (measured once per machine, then cached)")
        base = speed.cpu_baselines(problem, size, only=(bar.baseline,))
        lap("CPU baseline")
    median = float(np.median(yours))
    nbytes = problem.bytes_moved(size)
    flops = problem.flops(size) if problem.flops else 0
    details = {"size": size, "yours_ms": yours, "median_ms": median, "reference_ms": ref_ms,
               "copy_ceiling_ms": ceiling.median_ms, "copy_ceiling_label": ceiling.label,
               "bytes": nbytes, "flops": flops, "streams_created": streams,
               "launches_per_call": launched,
               "cpu_baselines": {b.label: b.median_ms for b in base}, "seconds": lap.seconds}
    label = problem.baselines[bar.baseline].label
    cpu = next((b for b in base if b.label == label), None)
    details["cpu_baseline"] = {"label": label, "ms": cpu.median_ms if cpu else None}
    result.details["speed"] = details
    gbps = nbytes / median / 1e6
    ceiling_gbps = nbytes / ceiling.median_ms / 1e6
    if gbps > 1.10 * ceiling_gbps:
        result.flags.append(f"speed: {gbps:.0f} GB/s measured, above the copy ceiling "
                            f"{ceiling_gbps:.0f} GB/s: impossible, so not rewarded")
        return Verdict(name, False, where, f"the timed calls report {gbps:.0f} GB/s, more "
                       f"than this GPU can copy ({ceiling_gbps:.0f} GB/s): flagged for your "
                       "instructor", "a time this short means the work was not all timed.")
    fraction = ref_ms / median
    speedup = cpu.median_ms / median if cpu else float("inf")
    rate = f"{gbps:.0f} GB/s" + (f", {flops / median / 1e6:,.0f} GFLOP/s" if flops and
                                 flops / nbytes >= 4 else "")
    summary = (f"{median:.3f} ms = {rate}, {fraction:.0%} of the course reference "
               f"({ref_ms:.3f} ms; bar {bar.min_fraction_of_reference:.0%}), {speedup:.1f}× {label} "
               f"(bar {bar.min_speedup:g}×); copy ceiling {ceiling_gbps:.0f} GB/s")
    if streams:
        summary += f"; {streams} stream(s) created: their work was timed too"
    if fraction >= bar.min_fraction_of_reference and speedup >= bar.min_speedup:
        return Verdict(name, True, message=summary)
    return Verdict(name, False, where, summary,
                   "look for uncoalesced accesses, a grid too small to fill the GPU, or work "
                   "repeated per element.")


@dataclass
class _SpeedCase:
    where: str

    def describe(self) -> str:
        return self.where


class LocalStudent:
    """The speed protocol of :class:`StudentProcess`, answered in this process: the learner's
    notebook runs the very same speed test as the judge (same harness, plan and sample checks),
    without a sandbox, since there is nothing to protect from one's own notebook."""

    def __init__(self, func_name: str, submission):
        from autograder.grading.runner import Harness
        self.harness = Harness()
        self.namespace = {func_name: submission}
        self.files: dict[str, dict] = {}

    def begin(self, obj: dict, allow: float) -> None:
        self._answer = self.ask(obj, "", allow)

    def receive(self, expect: str) -> dict:
        return self._answer

    def ask(self, obj: dict, expect: str, allow: float) -> dict:
        from autograder.core.spec import Case, as_size
        from autograder.grading.runner import problem_by_path
        op = obj["op"]
        if op == "speed_release":
            self.harness.release()
            return {"op": "speed_released"}
        if op == "speed_setup":
            self.harness.speed_setup(problem_by_path(obj["problem"]), obj["size"], obj["nonce"],
                                     obj["contents"], obj["buffers"])
            return {"op": "speed_ready"}
        if op == "timed":
            case = Case(size=obj["size"], inputs={}, blocks=as_size(obj["blocks"]),
                        threads=as_size(obj["threads"]))
            return self.harness.timed_call(problem_by_path(obj["problem"]),
                                           self.namespace[obj["func"]], case, obj["content"],
                                           obj["buffer"])
        if op == "sample":
            name = f"sample-{obj['call']}"
            self.files[name] = self.harness.sample(obj["buffer"], np.asarray(obj["idx"], np.int64))
            return {"op": "sampled", "file": name}
        raise ValueError(f"LocalStudent does not answer {op!r}")

    def load(self, name: str, max_bytes: int | None = None) -> dict[str, np.ndarray]:
        return self.files.pop(name)

    def close(self) -> None:
        self.harness.release()


def speed_test_here(problem, submission, func_name: str = "submission") -> tuple[Verdict, dict]:
    """The speed test as the learner's notebook runs it (``Problem.check_speed`` on a GPU)."""
    from autograder.core.progress import Progress
    settings = Settings(speed_without_gpu="zero")
    result = CellResult(grade_id="", passed=False)
    # _judge_speed reports 7 + speed_calls steps: inputs, 3 warm-up and speed_calls timed calls,
    # the reference, the copy, the CPU baselines
    with Progress(settings.speed_calls + 7, f"{problem.name} speed test") as bar:
        settings.progress = bar.begin
        verdict = _judge_speed(LocalStudent(func_name, submission), problem,
                               CheckCall(problem_path(problem), "check_speed", func_name),
                               settings, result)
    return verdict, result.details.get("speed", {})


def problem_path(problem) -> str:
    """The path a check cell names a problem by, e.g. ``ch02.vector_add_grid_stride`` (set when
    ``autograder.problems`` discovers the chapters)."""
    if not getattr(problem, "path", ""):
        raise LookupError(f"{problem.name} is not one of the course's problems")
    return problem.path


def _sample_indices(rng, n: int) -> np.ndarray:
    k = min(SAMPLE, n)
    idx = rng.choice(n, size=k, replace=False) if n > k else np.arange(n)
    guard = np.arange(n, n + GUARD)
    return np.concatenate([np.sort(idx), guard]).astype(np.int64)


def _check_sample(problem, inputs: dict, n: int, idx: np.ndarray, got: dict) -> str:
    body, guard = idx[idx < n], idx >= n
    expected, tol = problem.sampled(inputs, body)
    for key, exp in expected.items():
        values = got.get(key)
        if values is None or values.shape != idx.shape:
            return f"no sample of `{key}` came back"
        tail = values[guard]
        if not is_poison(tail).all():
            return f"something was written past the end of `{key}`"
        diff = np.abs(values[~guard].astype(np.float64) - exp)
        bad = ~(diff <= tol[key])
        if bad.any():
            j = int(np.argmax(bad))
            return (f"{int(bad.sum())} of {body.size} sampled elements of `{key}` are wrong; e.g. "
                    f"`{key}`[{int(body[j])}]: expected {exp[j]:.9g}, got {values[j]:.9g}")
    return ""


class WrongAtSpeedSize(RuntimeError):
    """A kernel timed by :func:`time_reference` with ``check`` failed a call or gave a wrong
    output at the speed size."""


def time_reference(problem, host: list[dict], plan, size, blocks, threads,
                   check: bool = False) -> float:
    """The course reference, timed with the same harness and plan as the learner's code.

    ``check`` (``aag bench``, which times kernels the course's tests check only at the visible
    sizes): every call must succeed, and the last call's output is sampled and checked at the
    speed size as a learner's is, else :class:`WrongAtSpeedSize`. A kernel that picks its build
    from the arrays (8-byte pairs where they fit) may take, at the speed size, a path no visible
    case took."""
    from autograder.core.spec import Case
    from autograder.grading.runner import Harness
    harness = Harness()
    harness.speed_setup_from_host(problem, host, 1 + max(b for _, b in plan), size)
    try:
        kernel = problem.reference_kernel()
        case = Case(size=size, inputs={}, blocks=blocks, threads=threads)
        times = []
        for c, b in plan[:3] + plan:
            call = harness.timed_call(problem, kernel, case, c, b)
            if check and call["error"]:
                raise WrongAtSpeedSize(f"a timed call failed: {call['error'].splitlines()[-1]}")
            times.append(call["ms"])
        if check:
            out_count = int(np.prod(next(iter(problem.outputs(size).values()))[0]))
            idx = _sample_indices(np.random.default_rng(len(plan)), out_count)
            wrong = _check_sample(problem, host[c], out_count, idx, harness.sample(b, idx))
            if wrong:
                raise WrongAtSpeedSize(f"wrong at the speed size: {wrong}")
    finally:
        harness.release()
    return float(np.median(times[3:]))


@contextlib.contextmanager
def gpu_lock(directory: Path):
    """Exclusive use of the GPU while timing: other graders on this machine wait here."""
    import fcntl
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "_") or "all"
    path = Path(directory) / f"aag-gpu-{visible}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        # Another user's lock file (in /tmp, only its owner may open it with O_CREAT or for
        # writing): flock needs neither, so wait on it all the same.
        fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# ---- judging a notebook ---------------------------------------------------------------------------

def grade_cells(nb) -> list[tuple[int, str, list[CheckCall]]]:
    """(index, grade_id, checks) for every grade cell that calls the course's checks."""
    found = []
    for index, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade"):
            checks = parse_checks(cell.source)
            if checks:
                found.append((index, meta.get("grade_id", f"cell-{index}"), checks))
    return found


def written_answer_id(cell) -> str | None:
    """The grade id of a written answer (a markdown cell graded by hand), else None."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if cell.get("cell_type") == "markdown" and meta.get("grade") and meta.get("solution"):
        return meta.get("grade_id")
    return None


def runs_isolated(cell) -> bool:
    """Does this code cell run in a process of its own (``%%isolated``)? Then it defines nothing
    the notebook's other cells use."""
    return cell.source.lstrip().startswith("%%isolated")


def cells_before(nb, index: int) -> list[dict]:
    """The code the student process runs for the grade cell at ``index``: every earlier code cell
    that is not a grade cell. Cells that run in a process of their own (``%%isolated``) are skipped:
    they cannot define anything the exercise uses. Neither are cells that hung or killed the kernel
    when nbgrader executed the notebook (skipping a cell can only remove definitions, never make
    wrong code pass)."""
    cells = []
    for i, cell in enumerate(nb.cells[:index]):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("grade") or not cell.source.strip():
            continue
        if runs_isolated(cell):
            continue
        if any(out.get("output_type") == "error" and out.get("ename") in SKIPPED_ERRORS
               for out in cell.get("outputs", [])):
            continue   # it hung or killed the kernel at Execute: running it again would too
        cells.append({"id": meta.get("grade_id") or cell.get("id", str(i)), "source": cell.source})
    return cells


def speed_yardsticks(checks: list[CheckCall], settings: Settings,
                     progress: Callable[[str], None] | None = None) -> dict[str, Yardsticks]:
    """The yardsticks of every speed check among ``checks`` (by problem path), timed now: before
    a notebook's code runs (:func:`time_yardsticks`). Nothing without a GPU."""
    if not on_gpu():
        return {}
    found = {}
    for path in _speed_problems(checks):
        if progress:
            progress(f"timing the course reference of {path.split('.')[-1]} for its speed test")
        found[path] = time_yardsticks(problem_by_path(path), settings)
    return found


def _speed_problems(checks) -> list[str]:
    """The problems (paths) that ``checks`` time, each once."""
    return sorted({c.problem for c in checks if c.kind == "check_speed"})


def progress_steps(nb) -> int:
    """How many steps :func:`judge_notebook` reports to its ``progress``."""
    cells = grade_cells(nb)
    speed = _speed_problems(c for _, _, checks in cells for c in checks)
    return len(cells) + (len(speed) if on_gpu() else 0)


def judge_notebook(nb, settings: Settings, files_from: Path | None = None,
                   progress=None) -> dict[str, CellResult]:
    """Judge every grade cell of a notebook, in order, in one student process (:class:`Session`)."""
    results = {}
    cells = grade_cells(nb)
    if any(problem_by_path(c.problem).kernel_language == "triton"
           for _, _, checks in cells for c in checks):
        settings = dataclasses.replace(settings, allow_triton=True)
    yardsticks = speed_yardsticks([c for _, _, checks in cells for c in checks], settings, progress)
    with Session() as session:
        for index, grade_id, checks in cells:
            if progress:
                progress(grade_id)
            results[grade_id] = judge_exercise(cells_before(nb, index), checks, settings,
                                               grade_id, files_from, session=session,
                                               yardsticks=yardsticks)
    return results


def error_output(text: str) -> dict:
    """An nbformat error output: nbgrader scores a grade cell holding one as 0."""
    return {"output_type": "error", "ename": "CheckFailed", "evalue": text,
            "traceback": [f"\x1b[0;31mCheckFailed\x1b[0m: {text}"]}


def stream_output(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text + "\n"}


# ---- the speed cell in a learner's notebook (Problem.check_speed) ----------------------------------

def check_speed(problem, submission) -> None:
    """The speed cell: on a GPU, the judge's own speed test run in this process (same inputs
    plan, sample checks after every timed call, reference timed in the same run); in CPU mode,
    say that this needs a GPU."""
    from autograder.core.checks import CheckFailed
    from autograder.core.spec import speed_without_gpu
    from autograder.machine import device
    if not device.current().is_gpu:
        worth = speed_without_gpu("notebook")
        msg = (f"Speed test for {problem.name} needs a GPU; this machine runs in "
               f"{device.current().label}, so nothing was timed.")
        if worth == "zero":
            raise CheckFailed(Verdict(problem.name + " (speed)", False, "CPU mode", msg,
                                      "the instructor grades speed only on a GPU."))
        print("ℹ " + msg + " (No points are at stake on this machine.)")
        return
    verdict, details = speed_test_here(problem, submission)
    if details:
        print(speed.speed_table(problem, details))
    if not verdict.passed:
        raise CheckFailed(verdict)
    print(verdict)


def _register() -> None:
    from autograder.grading import problem
    problem.SPEED_TEST[0] = check_speed


_register()
