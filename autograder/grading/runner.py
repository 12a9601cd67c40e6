"""The student side of the judge: runs a submission's cells and calls its code on given inputs.

Started by :mod:`autograder.judge` inside the sandbox, once per judged notebook (its cells arrive
in notebook order, the cases of each exercise after the cells above its grade cell). It never sees the secret seed or an expected result: it receives inputs, runs the
learner's code on outputs it filled with NaN, and sends the raw outputs back for the judge to
compare in its own process.

Before any learner code runs, the harness captures what it times and synchronises with, and
installs hooks that count kernel launches (whose kernel: the learner's own, or code from a library
or from this package), device-to-host copies and streams created. Learner code shares this process,
so a determined submission could still tamper with the harness itself (ctypes, rewriting function
objects); the judge scans the source for such tools and flags it for the instructor, and
cross-checks the harness's launch count with a second one kept by :mod:`autograder.provenance`
(which also proves, in CPU mode, that the learner's kernel computed the outputs, and fails host
copies of the exercise's arrays on CPU and GPU). The inputs' file is deleted as soon as it is
read, and GPU libraries (CuPy, PyTorch, JAX, Triton, cuda.compute) cannot be imported.

Protocol: one JSON object per line on the file descriptors that were stdin/stdout at start (the
learner's own prints go to ``student-output.txt``); arrays travel as ``.npz`` files in the working
folder, read by the judge with ``allow_pickle=False``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import sys
import time
import traceback

import numpy as np

OUTPUT_FILE = "student-output.txt"


# ---- values that travel as JSON --------------------------------------------------------------------

def encode_scalars(inputs: dict) -> tuple[dict, dict]:
    """Split a case's inputs into arrays (for an .npz) and exactly encoded scalars (for JSON)."""
    arrays, scalars = {}, {}
    for key, value in inputs.items():
        if isinstance(value, np.ndarray):
            arrays[key] = value
        elif isinstance(value, np.generic):
            scalars[key] = {"dtype": value.dtype.str, "value": _exact(value.item())}
        elif isinstance(value, (bool, int, float)):
            scalars[key] = {"type": type(value).__name__, "value": _exact(value)}
        else:
            raise TypeError(f"cannot send input {key!r} of type {type(value).__name__}")
    return arrays, scalars


def _exact(v):
    return float.hex(v) if isinstance(v, float) else v


def decode_scalars(scalars: dict) -> dict:
    out = {}
    for key, spec in scalars.items():
        v = spec["value"]
        v = float.fromhex(v) if isinstance(v, str) else v
        if "dtype" in spec:
            out[key] = np.dtype(spec["dtype"]).type(v)
        else:
            out[key] = {"bool": bool, "int": int, "float": float}[spec["type"]](v)
    return out


def problem_by_path(path: str):
    """``"ch02.vector_add"`` -> the Problem object in ``autograder.problems.ch02`` (in a student
    process, the copy taken before learner code could change it: :func:`snapshot_chapter`)."""
    import importlib

    if path in _AT_START:
        return _AT_START[path]
    module, name = path.split(".")
    return getattr(importlib.import_module(f"autograder.problems.{module}"), name)


_AT_START: dict = {}


def snapshot_chapter(name: str) -> None:
    """Copy chapter ``name``'s problems as the course made them. The student process does it
    for the chapters the judge names before it runs the first of the learner's cells: the checks
    then call these copies, so a cell that rebinds an attribute of a live problem (``p =
    ag.problems.ch28.ring_allreduce; p.launch = fake``) changes nothing the checks call."""
    import importlib
    module = importlib.import_module(f"autograder.problems.{name}")
    for problem in getattr(module, "PROBLEMS", ()):
        path = f"{name}.{problem.name}"
        if path not in _AT_START:
            _AT_START[path] = copy.copy(problem)
            _AT_START[path].path = path       # the copy is not the object the registry knows


# ---- the harness (set up before learner code runs) -------------------------------------------------

_hooks: dict = {}


# ---- answers in plain Python must not come from the course's code -----------------------------------

_WATCH = {"on": False, "tampered": False}
_TAMPER_EVENTS = ("sys.setprofile", "sys.settrace", "code.__new__")


def _audit(event, args):
    # Audit hooks cannot be removed: while a learner's formula runs, switching the profiler off
    # (or on again), tracing, or building code objects (to relabel the course's code as one's
    # own) is recorded, whatever the learner's code does to the profiler afterwards.
    if _WATCH["on"] and event in _TAMPER_EVENTS:
        _WATCH["tampered"] = True


def watch_course_code(launch, seen: list):
    """``launch`` with a profiler on while it runs: a call of any function defined in
    ``autograder/problems/`` (the exercises' specs, references and helpers), other than
    ``launch`` itself and the comprehensions in it, is appended to ``seen`` by name; so is a
    change of the profiler or the tracer, or a code object built, during the call (an audit hook
    sees those)."""
    import threading

    # autograder/problems/, found from this file (grading sits below problems: no import of it)
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "problems") + os.sep
    own: set = set()            # launch's code and the comprehensions inside it
    todo = [getattr(launch, "__code__", None)]
    while todo:
        code = todo.pop()
        if code is not None and code not in own:
            own.add(code)
            todo.extend(c for c in code.co_consts if hasattr(c, "co_filename"))
    if not getattr(watch_course_code, "audited", False):
        sys.addaudithook(_audit)
        watch_course_code.audited = True

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code not in own and code.co_filename.startswith(root):
                seen.append(f"{os.path.relpath(code.co_filename, root)}: {code.co_name}")

    def watched(*args, **kwargs):
        # (threading.getprofile is Python 3.12's; 3.11 keeps the hook in a module global)
        old = sys.getprofile()
        old_threads = getattr(threading, "_profile_hook", None)
        sys.setprofile(profile)
        threading.setprofile(profile)
        _WATCH["on"], _WATCH["tampered"] = True, False
        try:
            return launch(*args, **kwargs)
        finally:
            _WATCH["on"] = False
            if _WATCH["tampered"] or sys.getprofile() is not profile:
                seen.append("the grader's monitor (the profiler or tracer was changed, or code "
                            "objects were built, while your function ran)")
            sys.setprofile(old)
            threading.setprofile(old_threads)
    return watched


class Harness:
    def __init__(self):
        from numba import cuda

        from autograder.machine import device

        self.gpu = device.current().is_gpu
        self.cuda = cuda
        self.course_calls: list[str] = []
        self._event = cuda.event
        self._device_sync = cuda.synchronize
        self._to_device = cuda.to_device
        if self.gpu:
            # The very functions, not names looked up at call time: rebinding Event.record,
            # driver.event_elapsed_time or cuda.synchronize afterwards changes nothing here.
            from numba.cuda.cudadrv import driver
            event_class = type(cuda.event())
            self._record, self._event_sync = event_class.record, event_class.synchronize
            self._elapsed = driver.event_elapsed_time
            from autograder.machine.timing import hold_gpu
            self._hold = lambda: hold_gpu(self._hold_ms)
        else:
            # CPU mode: the speed protocol runs too (its tests need no GPU), on host clocks; the
            # simulator's times say nothing about a GPU, and no grade is made of them here.
            self._record = lambda event: setattr(event, "at", time.perf_counter())
            self._event_sync = lambda event: None
            self._elapsed = lambda first, last: 1e3 * (last.at - first.at)
            self._hold = lambda: None
        # How long the GPU is held before a timed call: twice the host time the previous call's
        # launch took (0.3 to 20 ms), so that a launch of several kernels, or one that Python
        # takes long to queue, is queued whole before the GPU reaches the start event.
        self._hold_ms = 0.3
        self._clock = time.perf_counter
        self.recording = False
        self.language = "numba"                        # the exercise's kernel language
        self.launches: list[tuple[str, bool]] = []     # (kernel name, is the learner's own)
        self.d2h = 0
        self.streams = 0
        from autograder.grading.provenance import is_learner_code, trusted_roots
        self._trusted = trusted_roots()
        self._is_learner_code = is_learner_code
        self._install_hooks()
        if self.gpu:   # host copies of the exercise's arrays, launches at the driver's layer
            from autograder.grading import provenance
            provenance.install_gpu()
        if self.gpu:
            @cuda.jit
            def gather(src, idx, dst):
                i = cuda.grid(1)
                if i < idx.size:
                    dst[i] = src[idx[i]]
            self._gather = gather

    def _own(self, fn) -> bool:
        return self._is_learner_code(fn, self._trusted)

    def _record_launch(self, fn, language: str = "numba") -> None:
        # The course's preparing kernels (zeroing an output) are not launches of anybody's answer;
        # a kernel in another language than the exercise's is not its answer either.
        if self.recording and not _is_course_helper(fn):
            name = getattr(fn, "__name__", "?")
            own = self._own(fn)
            if own and language != self.language:
                name = f"{name} (a {language.title()} kernel: this exercise asks for a " \
                       f"{self.language.title()} one)"
                own = False
            self.launches.append((name, own))

    def _install_hooks(self) -> None:
        _hooks["harness"] = self
        if _hooks.get("installed"):
            return
        _hooks["installed"] = True

        class _Current:   # the hooks below report to whichever harness is the latest
            def __getattr__(self, name):
                return getattr(_hooks["harness"], name)
        harness = _Current()
        if self.gpu:
            from numba.cuda import dispatcher
            from numba.cuda.cudadrv import devicearray

            call = dispatcher.CUDADispatcher.call

            def counted_call(self, args, launch_config):
                harness._record_launch(self.py_func)
                return call(self, args, launch_config)
            dispatcher.CUDADispatcher.call = counted_call
            copy_to_host = devicearray.DeviceNDArrayBase.copy_to_host
        else:
            from numba.cuda.simulator import kernel as simkernel
            from numba.cuda.simulator.cudadrv import devicearray

            kcall = simkernel.FakeCUDAKernel.__call__

            def counted_kcall(self, *args):
                if not self._device and not simkernel._kernel_context:
                    harness._record_launch(self.fn)
                return kcall(self, *args)
            simkernel.FakeCUDAKernel.__call__ = counted_kcall
            copy_to_host = devicearray.FakeCUDAArray.copy_to_host

        def counted_copy(self, *a, **k):
            if harness.recording:
                _hooks["harness"].d2h += 1
            return copy_to_host(self, *a, **k)
        (devicearray.DeviceNDArrayBase if self.gpu else devicearray.FakeCUDAArray).copy_to_host = \
            counted_copy

        stream = self.cuda.stream

        def counted_stream(*a, **k):
            _hooks["harness"].streams += 1
            return stream(*a, **k)
        self.cuda.stream = counted_stream

    def _install_triton_hooks(self) -> None:
        """Count Triton's launches as Numba's are counted, once the learner's cells imported it
        (importing it for every notebook would cost each student process a second)."""
        if _hooks.get("triton") or "triton" not in sys.modules:
            return
        _hooks["triton"] = True
        from triton.runtime import jit

        def counting(cls):
            run = cls.run

            def counted_run(self, *args, **kwargs):
                _hooks["harness"]._record_launch(self.fn, "triton")
                return run(self, *args, **kwargs)
            cls.run = counted_run
        counting(jit.JITFunction)
        if self.gpu:   # the second count, at Triton's launcher (autograder.provenance)
            from autograder.grading import provenance
            provenance.install_triton_gpu()
        else:
            from triton.runtime import interpreter
            counting(interpreter.InterpretedFunction)

    def reset_counts(self) -> None:
        self.launches, self.d2h, self.streams = [], 0, 0
        self.course_calls = []

    def counts(self) -> dict:
        return {"student_launches": sum(own for _, own in self.launches),
                "foreign_launches": sorted({name for name, own in self.launches if not own}),
                "d2h": self.d2h, "streams": self.streams,
                "course_calls": sorted(set(self.course_calls))}

    def recorded(self, launch):
        def wrapped(*args, **kwargs):
            self.recording = True
            try:
                return launch(*args, **kwargs)
            finally:
                self.recording = False
        return wrapped

    # -- correctness ------------------------------------------------------------------------------
    def run_case(self, problem, submission, case, forget_inputs: bool = False):
        problem = copy.copy(problem)
        self._install_triton_hooks()
        self.language = problem.kernel_language
        self.reset_counts()
        launch = problem.launch
        if getattr(problem, "watch_course_code", False):
            # An answer in plain Python (a formula, kit.formula): the course's own functions that
            # compute it ship in this package, so every call into the exercises' code while the
            # learner's function runs is recorded, and the judge fails the case.
            launch = watch_course_code(launch, self.course_calls)
        problem.launch = self.recorded(launch)
        return problem.run_here(submission, case, forget_inputs=forget_inputs)

    # -- speed (GPU only) -------------------------------------------------------------------------
    def speed_setup(self, problem, size, nonce: int, contents: int, buffers: int) -> None:
        host = [speed_inputs(problem, nonce, c, size) for c in range(contents)]
        self.speed_setup_from_host(problem, host, buffers, size)

    def speed_setup_from_host(self, problem, host: list[dict], buffers: int, size) -> None:
        """Device copies of every content set (masters), ``buffers`` working sets the calls run
        on, outputs with guard zones, a NaN image to poison them, and a buffer to flush L2."""
        from autograder.core.checks import GUARD, poison_value
        from autograder.machine.timing import l2_bytes
        cuda = self.cuda
        self.masters = [{k: self._to_device(v) for k, v in inputs.items()
                         if isinstance(v, np.ndarray)} for inputs in host]
        # Scalars per content set (a problem may draw coefficients at random with the arrays).
        self.scalars = [{k: v for k, v in inputs.items() if not isinstance(v, np.ndarray)}
                        for inputs in host]
        first = self.masters[0]
        self.work = [{k: cuda.device_array_like(v) for k, v in first.items()} for _ in range(buffers)]
        shapes = problem.outputs(size)
        self.out_shapes = shapes
        self.out_bufs = [{name: cuda.device_array(int(np.prod(shape)) + GUARD, dtype)
                          for name, (shape, dtype) in shapes.items()} for _ in range(buffers)]
        self.poison = {name: self._to_device(np.full(int(np.prod(shape)) + GUARD,
                                                     poison_value(dtype), dtype))
                       for name, (shape, dtype) in shapes.items()}
        scratch = max(2 * l2_bytes(), 1 << 20) if self.gpu else 1 << 20
        self.flush_src = cuda.device_array(scratch, np.uint8)
        self.flush_dst = cuda.device_array(scratch, np.uint8)

    def release(self) -> None:
        self.masters = self.work = self.out_bufs = self.poison = None
        self.flush_src = self.flush_dst = None
        import gc
        gc.collect()
        with contextlib.suppress(Exception):      # Numba frees device memory lazily: now
            self.cuda.current_context().deallocations.clear()

    def timed_call(self, problem, submission, case, content: int, buffer: int) -> dict:
        """One timed call: fresh inputs copied in, outputs poisoned, L2 flushed (none of it timed).

        The GPU is kept busy (``hold``, for twice as long as the previous call took to queue) while
        Python queues the start event and the launch, so the timed region starts when the GPU
        reaches the learner's work. Two end events: one queued
        right after the launch (on the legacy default stream, which waits for work on the
        ordinary streams ``cuda.stream()`` makes), one after a device-wide synchronize (which
        waits for everything, on any stream). The first is the time, unless the second came
        noticeably later: then work was left running somewhere the first did not see, and the
        later one counts."""
        self._install_triton_hooks()
        self.language = problem.kernel_language
        work, outs = self.work[buffer], self.out_bufs[buffer]
        for key, master in self.masters[content].items():
            work[key].copy_to_device(master)
        views = {}
        for name, buf in outs.items():
            buf.copy_to_device(self.poison[name])
            shape = self.out_shapes[name][0]
            size = int(np.prod(shape))
            views[name] = buf[:size].reshape(shape) if len(shape) > 1 else buf[:size]
        self.flush_dst.copy_to_device(self.flush_src)
        self._device_sync()
        self.reset_counts()
        start, end_queued, end = self._event(), self._event(), self._event()
        error = None
        queued = False
        launch = self.recorded(problem.launch)
        from autograder.grading import provenance
        ranges = None              # CPU mode (the protocol's tests): nothing recorded
        if self.gpu:
            ranges = provenance.DeviceRanges(problem.host_copies_allowed, problem.device_only)
            for name, buf in [*work.items(), *outs.items()]:
                ranges.add(name, buf)
        self._hold()
        self._record(start)
        queue_start = self._clock()
        try:
            with provenance.recording(ranges) if ranges else contextlib.nullcontext():
                launch(submission, {**work, **self.scalars[content]}, views, case)
            self._hold_ms = min(20.0, max(0.3, 2e3 * (self._clock() - queue_start)))
            self._record(end_queued)
            queued = True
            self._device_sync()
        except Exception as exc:   # learner code
            error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        error = error or (ranges.verdict() if ranges else None)
        self._record(end)
        self._event_sync(end)
        wall = self._elapsed(start, end)
        ms = wall
        if queued:
            gpu = self._elapsed(start, end_queued)
            if wall - gpu <= max(0.05, 0.1 * gpu):
                ms = gpu
        return {"ms": ms, "wall_ms": wall, "error": error, **self.counts(),
                "provenance": ranges.summary() if ranges else {}}

    def sample(self, buffer: int, idx: np.ndarray) -> dict[str, np.ndarray]:
        cuda = self.cuda
        d_idx = self._to_device(idx.astype(np.int64))
        got = {}
        for name, buf in self.out_bufs[buffer].items():
            if not self.gpu:                       # CPU mode: the simulator's arrays are host ones
                got[name] = buf.copy_to_host()[idx]
                continue
            dst = cuda.device_array(idx.size, buf.dtype)
            self._gather[(idx.size + 255) // 256, 256](buf, d_idx, dst)
            got[name] = dst.copy_to_host()
        return got



def cell_error_text(err: BaseException) -> str:
    """One line for an error a cell raised; a SyntaxError says where, with the offending text
    (``str()`` of one says only "invalid syntax (<ipython-input-...>, line 3)")."""
    if isinstance(err, SyntaxError):
        where = f"line {err.lineno} of the cell" if err.lineno else "the cell"
        text = (err.text or "").strip()
        return (f"{type(err).__name__}: {err.msg} ({where}" + (f": `{text[:120]}`" if text else "")
                + ")")
    return f"{type(err).__name__}: {str(err)[:300]}"


def missing_function_text(func: str, cell_errors: list[dict]) -> str:
    """Why the check has nothing to call: the cell that failed to define ``func``, when one
    raised (a SyntaxError in the solution cell is the usual reason), else a NameError."""
    if cell_errors:
        # The failing cell that mentions the function (the exercise's cell), else the last one.
        named = [e for e in cell_errors if re.search(rf"\b{re.escape(func)}\b", e.get("source", ""))]
        first = (named or cell_errors)[-1]
        cell = f" `{first['cell']}`" if first.get("cell") else ""
        return (f"{first['error']}: in cell{cell}, so `{func}` was never defined; fix that cell "
                "first")
    return (f"NameError: name '{func}' is not defined (the exercise cell must define it; no cell "
            "before the check raised, so is it spelled differently there?)")


def _is_course_helper(fn) -> bool:
    from autograder.grading.provenance import is_course_helper
    return is_course_helper(fn)


def speed_inputs(problem, nonce: int, content: int, size) -> dict:
    """The inputs of one content set of a speed run: the judge regenerates the same values."""
    rng = np.random.default_rng([nonce, content])
    return problem.speed_inputs(rng, size)


# ---- libraries that compute for the learner ------------------------------------------------------

BLOCKED_IMPORTS = ("cupy", "cupyx", "torch", "jax", "jaxlib", "triton", "cuda.compute",
                   "cuda.cccl", "tensorflow")


class _NoGpuLibraries:
    """A ``sys.meta_path`` finder, first in line while a submission is graded: the exercises ask
    for the learner's own kernels, and a library (CuPy, PyTorch, JAX, Triton, cuda.compute) would
    compute the answer on the device where no recorder can tell its stores from the kernel's.
    Removing it from ``sys.meta_path`` is flagged by the judge's static pass."""

    blocked = BLOCKED_IMPORTS

    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in self.blocked):
            # ModuleNotFoundError: code that tolerates a missing optional library skips it
            raise ModuleNotFoundError(
                f"`{name}` cannot be imported while your code is graded: the exercise is to write "
                "the kernel yourself, so GPU libraries (CuPy, PyTorch, JAX, Triton, cuda.compute) "
                "are not available here")
        return None

    def invalidate_caches(self):
        pass


ALLOW_TRITON_ENV = "AAG_ALLOW_TRITON"   # the judge sets it for a notebook with a Triton exercise


def block_gpu_libraries() -> None:
    blocked = BLOCKED_IMPORTS
    if os.environ.get(ALLOW_TRITON_ENV) == "1":
        blocked = tuple(b for b in blocked if b != "triton")
    _NoGpuLibraries.blocked = blocked
    for name in list(sys.modules):
        if any(name == b or name.startswith(b + ".") for b in blocked):
            del sys.modules[name]
    if not any(isinstance(f, _NoGpuLibraries) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoGpuLibraries())


# ---- the loop ----------------------------------------------------------------------------------------

def main() -> None:
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    log = os.open(OUTPUT_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)

    def send(obj) -> None:
        proto_out.write(json.dumps(obj) + "\n")
        proto_out.flush()

    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        from autograder.machine import device
        if device.select().name == "cpu":   # the backend first; then the data-flow recorder
            from autograder.grading import provenance
            provenance.install()
        harness = Harness()
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
    except Exception:
        send({"op": "hello", "error": traceback.format_exc()[-2000:]})
        raise
    block_gpu_libraries()
    sys.path.append(os.getcwd())   # the learner's own modules, after everything installed
    send({"op": "hello", "backend": device.current().name})
    case_number = 0
    cell_errors: list[dict] = []
    for line in proto_in:
        msg = json.loads(line)
        op = msg["op"]
        if op == "exec":
            for path in msg.get("problems", ()):       # before the learner's cells run
                snapshot_chapter(path.split(".", 1)[0])
            errors, sources = [], []
            for cell in msg["cells"]:
                result = shell.run_cell(cell["source"], store_history=False)
                err = result.error_in_exec or result.error_before_exec
                if err is not None:
                    errors.append({"cell": cell.get("id", ""), "error": cell_error_text(err)})
                    sources.append(cell["source"])
            # Named (with the failing cell's source, kept here) if the exercise's function turns
            # out to be missing.
            cell_errors += [dict(e, source=src) for e, src in zip(errors, sources)]
            send({"op": "executed", "errors": errors})
        elif op == "case":
            from autograder.core.spec import Case, as_size
            problem = problem_by_path(msg["problem"])
            with np.load(msg["inputs"], allow_pickle=False) as data:
                inputs = {k: data[k] for k in data.files}
            # Gone before learner code runs: no np.load of the inputs to compute on the host.
            with contextlib.suppress(OSError):
                os.unlink(msg["inputs"])
            inputs.update(decode_scalars(msg["scalars"]))
            inputs = {k: inputs[k] for k in msg["order"]}
            case = Case(size=as_size(msg["size"]), inputs=inputs, blocks=as_size(msg["blocks"]),
                        threads=as_size(msg["threads"]))
            submission = shell.user_ns.get(msg["func"])
            if submission is None:
                from autograder.core.checks import Outcome
                outcome = Outcome(error=missing_function_text(msg["func"], cell_errors),
                                  error_kind="exception")
            else:
                del inputs
                outcome = harness.run_case(problem, submission, case, forget_inputs=True)
            case_number += 1
            out_file = f"outputs-{case_number}.npz"
            np.savez(out_file, **{k: np.asarray(v) for k, v in outcome.outputs.items()})
            send({"op": "outcome", "outputs": out_file, "guard_intact": outcome.guard_intact,
                  "error": outcome.error, "error_kind": outcome.error_kind,
                  "seconds": outcome.seconds, **harness.counts(),
                  "provenance": getattr(outcome, "provenance", None)})
            if outcome.error_kind in ("cuda", "hang"):
                break   # the CUDA context may be unusable now: the judge starts a fresh process
        elif op == "speed_setup":
            problem = problem_by_path(msg["problem"])
            from autograder.core.spec import as_size
            harness.speed_setup(problem, as_size(msg["size"]), msg["nonce"], msg["contents"],
                                msg["buffers"])
            send({"op": "speed_ready"})
        elif op == "speed_release":
            harness.release()          # the GPU memory goes back before the next exercise
            send({"op": "speed_released"})
        elif op == "timed":
            from autograder.core.spec import Case, as_size
            problem = problem_by_path(msg["problem"])
            case = Case(size=as_size(msg["size"]), inputs={}, blocks=as_size(msg["blocks"]),
                        threads=as_size(msg["threads"]))
            submission = shell.user_ns.get(msg["func"])
            result = harness.timed_call(problem, submission, case, msg["content"], msg["buffer"])
            send({"op": "timed", **result})
        elif op == "sample":
            idx = np.asarray(msg["idx"], dtype=np.int64)
            got = harness.sample(msg["buffer"], idx)
            out_file = f"sample-{msg['call']}.npz"
            np.savez(out_file, **got)
            send({"op": "sampled", "file": out_file})
        elif op == "bye":
            break
    proto_out.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
