"""One exercise = one :class:`Problem`: spec, inputs, tolerance, launch, sizes, baselines, speed bar.

A check is three steps kept apart so a judge can put them in different processes:
``cases`` (inputs, from a seed) -> ``run`` (calls the learner's code, returns raw outputs) ->
``judge`` (compares with the float64 spec; never calls learner code).
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import select
import signal
import sys
import time
import traceback
import warnings
from typing import Any, Callable

import numpy as np

from autograder.machine import device, fenced
from autograder.core.checks import (GENERIC_VALUE_HINT, GUARD, CheckFailed, Outcome, Verdict, fmt, compare,
                     is_poison, poison_value)

from autograder.core.spec import (CHECK_TIMEOUT_ENV, HIDDEN_SEED_ENV, Case, Sizes, being_graded,
                                  stable_seed)
from autograder.core.spec import Baseline, SpeedBar  # noqa: F401  (re-exported for the chapters)


# The speed test a notebook's speed cell runs (Problem.check_speed). It is the judge's, and the
# judge needs this module: autograder.grading.judge registers it when imported (the package does).
SPEED_TEST: list = [None]


class _Hung(Exception):
    pass


# id(submission) -> (submission, message), so a hang costs one timeout. The submission itself is
# kept: were it freed, a later submission could get its id and be called hung without a run.
_hung_submissions: dict[int, tuple] = {}


KERNEL_LANGUAGES = ("numba", "triton")
# The chapters' layer (autograder.problems) sets this when it is imported, before any chapter's
# exercise exists: exercise -> "ch02.vector_add", from the chapter module that lists it.
PATH_OF: Callable[[Any], str] | None = None


class Problem:
    """An exercise. See the chapter packages in :mod:`autograder.problems` for real ones.

    Most exercises are a ``Problem(...)`` with functions passed in. An exercise that grades in
    a way of its own subclasses it and overrides one of these methods, each with a default here;
    the judge and its student process call only these (never ``hasattr``):

    - :meth:`cases` -- the visible or hidden cases (draw the seed with :meth:`case_seed`);
    - :meth:`portability_cases`, with :attr:`portable_warp_sizes` -- cases at another warp
      size, for code that must not assume 32 (run in CPU mode when graded on a GPU);
    - :meth:`time_limit` -- processor seconds one case may take (in CPU mode through
      :meth:`simulated_threads`, the work a case may take);
    - :meth:`run_here` -- one call of the learner's code on one case, in this process;
    - :meth:`judge` -- the verdict on what one call returned (never calls learner code).
    """

    _path = ""

    @property
    def path(self) -> str:
        """``"ch02.vector_add"``: the chapter that lists this exercise, and its name there."""
        if not self._path and PATH_OF is not None:
            self._path = PATH_OF(self)
        return self._path

    @path.setter
    def path(self, value: str) -> None:
        self._path = value

    portable_warp_sizes: tuple[int, ...] = ()   # warp sizes the code must be right at, if any

    def __init__(self, name: str, *, title: str, spec: Callable[..., dict[str, np.ndarray]],
                 make_inputs: Callable[[np.random.Generator, int], dict[str, Any]],
                 outputs: Callable[[int], dict[str, tuple[tuple[int, ...], Any]]],
                 tolerance: Callable[[dict[str, Any], dict[str, np.ndarray]], dict[str, np.ndarray]],
                 launch: Callable[[Callable, dict, dict, Case], None],
                 cpu_sizes: Sizes, gpu_sizes: Sizes, on_device: bool = True,
                 block_sizes: tuple[int, ...] = (), visible_block_size: int = 0,
                 blocks_for: Callable[[int, int], int] | None = None,
                 bytes_moved: Callable[[int], int] | None = None,
                 flops: Callable[[int], int] | None = None,
                 reference: Callable[[], Callable] | None = None,
                 baselines: dict[str, Baseline] | None = None,
                 vendor: Callable | None = None, vendor_label: str = "",
                 speed: SpeedBar | None = None, elementwise: bool = False,
                 speed_inputs: Callable[[np.random.Generator, int], dict[str, Any]] | None = None,
                 size_label: Callable[[Any], str] | None = None, value_hint: str = "",
                 sample_spec: Callable[[dict[str, Any], np.ndarray],
                                       tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] | None = None,
                 speed_launch: Callable[[Any], tuple[Any, Any]] | None = None,
                 race_check_outputs: bool = False,
                 host_copies_allowed: bool = False, device_only: bool = False,
                 must_read: Callable[[Case], dict[str, Any]] | None = None,
                 kernel_language: str = "numba"):
        self.name = name
        self.title = title
        self.spec = spec
        self.make_inputs = make_inputs
        self.outputs = outputs
        self.tolerance = tolerance
        self.launch = launch
        self.cpu_sizes, self.gpu_sizes = cpu_sizes, gpu_sizes
        self.on_device = on_device
        self.block_sizes = block_sizes
        self.visible_block_size = visible_block_size
        self.blocks_for = blocks_for or (lambda n, t: (n + t - 1) // t)
        self.bytes_moved = bytes_moved
        self.flops = flops
        self.reference = reference
        self.baselines = baselines or {}
        self.vendor, self.vendor_label = vendor, vendor_label
        self.speed = speed
        self.elementwise = elementwise          # output[i] depends on inputs[i] only
        self._speed_inputs = speed_inputs or make_inputs
        self.size_label = size_label            # names a (multi-dimensional) size in verdicts
        self.value_hint = value_hint            # replaces the generic hint for a wrong value
        # (expected, tolerance) in float64 at flat output indices only: the speed test checks
        # samples of every timed call, and a whole float64 spec at chip-filling sizes is too slow
        # where an output element depends on many inputs (a matmul).
        self.sample_spec = sample_spec
        self.speed_launch = speed_launch        # size -> (blocks, threads) for the speed test
        # CPU mode: also record plain and atomic accesses to the outputs during a launch and stop
        # it with races.GlobalMemoryRace when two threads conflict (a histogram without atomics).
        self.race_check_outputs = race_check_outputs
        # Provenance (autograder.provenance): may the learner's code copy the exercise's arrays
        # to or from the host during a call? Which input elements must a thread of the learner's
        # kernel read (case -> {input: True | False | bool mask}; inputs not named: every element)?
        self.host_copies_allowed = host_copies_allowed
        # A submission that is a host function launching kernels of its own: nothing at all may
        # be read back to the host during a call, its own scratch arrays included.
        self.device_only = device_only
        self.must_read = must_read
        # "numba" or "triton": the kernels a submission's answer must come from. Only a
        # notebook with a Triton exercise may import Triton while it is graded, and a launch of
        # the other language's kernel is not the learner's answer to this exercise.
        if kernel_language not in KERNEL_LANGUAGES:
            raise ValueError(f"kernel_language must be one of {KERNEL_LANGUAGES}")
        self.kernel_language = kernel_language

    def reference_kernel(self) -> Callable:
        """The course's reference kernel, compiled on first use (``reference`` is its factory)."""
        return self.reference()

    def __repr__(self) -> str:
        return f"<Problem {self.name}: {self.title}>"

    # ---- cases -------------------------------------------------------------------------------
    @property
    def sizes(self) -> Sizes:
        return self.gpu_sizes if device.current().is_gpu else self.cpu_sizes

    def case_seed(self, hidden: bool) -> int:
        """The seed of this problem's cases when none is given: visible ones are the same for
        everyone; hidden ones mix in the instructor's secret (``AAG_SECRET_SEED``). The one place
        it is derived: a problem with cases of its own calls this."""
        secret = os.environ.get(HIDDEN_SEED_ENV, "course-default") if hidden else "visible"
        return stable_seed(self.name, secret)

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        """Seeded cases: visible ones are the same for everyone; hidden ones mix in a secret."""
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = list(self.sizes.hidden if hidden else self.sizes.visible)
        count, lo, hi = self.sizes.hidden_random
        if hidden and count:
            if sizes and isinstance(sizes[0], tuple):   # shapes: each side drawn in [lo, hi)
                sizes += [tuple(int(s) for s in rng.integers(lo, hi, size=len(sizes[0])))
                          for _ in range(count)]
            else:
                sizes += [int(s) for s in rng.integers(lo, hi, size=count)]
        # Visible cases use the visible shape (no draw: their inputs stay the same); the others
        # draw theirs so that every shape is used.
        draw = self.block_sizes and (hidden or not self.visible_block_size)
        shapes = self.block_size_cycle(rng, len(sizes)) if draw else []
        cases = []
        for i, n in enumerate(sizes):
            case = Case(size=n, inputs=self.make_inputs(rng, n))
            if self.size_label:
                case.label = self.size_label(n)
            if self.block_sizes:
                t = self.visible_block_size if not hidden and self.visible_block_size else shapes[i]
                case.threads, case.blocks = t, self.blocks_for(n, t)
            cases.append(case)
        return cases

    def block_size_cycle(self, rng: np.random.Generator, count: int) -> list:
        """Block shapes for ``count`` cases: :attr:`block_sizes` in a random order, repeated, so
        that every shape is used once there are as many cases (drawn independently, all of a
        small hidden set could land on one shape, and a kernel written for that shape only
        would pass by luck: 1 run in 81 for four cases and three shapes)."""
        order = rng.permutation(len(self.block_sizes))
        return [self.block_sizes[int(order[i % len(order)])] for i in range(count)]

    def portability_cases(self, warp: int, seed: int | None = None) -> list[Case]:
        """Hidden cases run at warp size ``warp`` (one of :attr:`portable_warp_sizes`)."""
        return []

    def sizes_text(self, cases: list[Case]) -> str:
        """The sizes of some cases, for a verdict: "n = 1025, 1023, 1" or the problem's labels."""
        if self.size_label:
            return "; ".join(c.label or self.size_label(c.size) for c in cases)
        return "n = " + ", ".join(str(c.size) for c in cases)

    # ---- running (calls learner code) ----------------------------------------------------------
    def run(self, submission: Callable, case: Case) -> Outcome:
        """Run the submission on one case with poisoned outputs; return what came back."""
        hung = _hung_submissions.get(id(submission))
        if hung and hung[0] is submission:
            return Outcome(error=hung[1], error_kind="hang")
        if not device.current().is_gpu and hasattr(os, "fork") and not os.environ.get("AAG_NO_FORK"):
            outcome = _run_forked(lambda: self.run_here(submission, case), self.time_limit(case))
        else:
            outcome = self.run_here(submission, case)
        if outcome.error_kind == "hang":
            _hung_submissions[id(submission)] = (submission, (
                f"{outcome.error} (it hung on an earlier case too, so it was not run again)"))
        return outcome

    def _recorder(self, submission, args: dict, must: dict):
        """The data-flow recorder of one call (autograder.provenance), its arrays registered;
        None for a problem with nothing to record. ``add_output`` still to be called."""
        from autograder.grading import provenance
        if device.current().is_gpu:
            provenance.install_gpu()
            provenance.install_triton_gpu()     # where the learner's cells imported Triton
            rec = provenance.DeviceRanges(self.host_copies_allowed, self.device_only)
            for name, value in args.items():
                if hasattr(value, "__cuda_array_interface__"):
                    rec.add(name, value)
            rec.add_output = lambda name, buf, *rest: rec.add(name, buf)
            return rec
        provenance.install_triton()         # where the learner's cells imported Triton
        rec = provenance.Recorder(elementwise=self.elementwise,
                                  host_copies_allowed=self.host_copies_allowed,
                                  device_only=self.device_only,
                                  course_submission=provenance.is_course_code(submission))
        for name, value in args.items():
            ary = getattr(value, "__dict__", {}).get("_ary")
            if isinstance(ary, np.ndarray):
                rec.add_input(name, value, must.get(name, True), decoy=True)
        return rec

    def time_limit(self, case: Case) -> float:
        """Seconds of processor time one call on ``case`` may take (the judge's and the forked
        run's limit; ``AAG_CHECK_TIMEOUT`` sets it for every case)."""
        if os.environ.get(CHECK_TIMEOUT_ENV):
            return float(os.environ[CHECK_TIMEOUT_ENV])
        if device.current().is_gpu:
            # A GPU runs a hidden case (2^24 elements) in milliseconds; the first call also
            # compiles the kernel and copies the inputs. A minute is ample, and a kernel that
            # never returns costs a minute, not the hours the simulator's rate below would give.
            return 60.0 + 1e-6 * case.thread_count
        # The simulator runs roughly 10^4 threads per second on one core: allow a wide margin.
        return 20.0 + 2e-3 * self.simulated_threads(case)

    def simulated_threads(self, case: Case) -> float:
        """The thread-sized pieces of work one call on ``case`` may take in CPU mode (the time
        limit's measure): one per thread, unless a thread may do many points' work."""
        return case.thread_count

    def run_here(self, submission: Callable, case: Case, forget_inputs: bool = False) -> Outcome:
        """One call of the submission on ``case``. ``forget_inputs``: drop the host copies of the
        inputs once they are on the device (the judge's student process, which never needs them
        again: learner code finds no host copy of them to compute from)."""
        from numba import cuda
        shapes = self.outputs(case.size)
        t0 = time.perf_counter()
        outcome = Outcome()
        recorder = None
        try:
            if self.on_device:
                # On an NVIDIA GPU each input ends where mapped memory ends, so a read past its
                # end faults there as it does in CPU mode (autograder.machine.fenced).
                args = {k: fenced.to_device(v) if isinstance(v, np.ndarray) else v
                        for k, v in case.inputs.items()}
                must = self.must_read(case) if self.must_read else {}
                if forget_inputs:
                    for k, v in list(case.inputs.items()):
                        if isinstance(v, np.ndarray):
                            case.inputs[k] = None
                recorder = self._recorder(submission, args, must)
                bufs, outs = {}, {}
                # CPU mode, for problems that ask: outputs as host arrays whose every access in
                # a launch is race-checked (the simulator copies them in and back out).
                tracked = self.race_check_outputs and not device.current().is_gpu
                for name, (shape, dtype) in shapes.items():
                    size = int(np.prod(shape))
                    if tracked:
                        from autograder.machine.simulator import races
                        bufs[name] = np.full(size + GUARD, poison_value(dtype), dtype)
                        outs[name] = races.track_outputs({name: bufs[name][:size].reshape(shape)})[name]
                        if recorder is not None:
                            recorder.add_output(name, bufs[name], shape, type(outs[name]))
                        continue
                    bufs[name] = cuda.to_device(np.full(size + GUARD, poison_value(dtype), dtype))
                    outs[name] = bufs[name][:size].reshape(shape) if len(shape) > 1 else bufs[name][:size]
                    if recorder is not None:
                        recorder.add_output(name, bufs[name], shape)
                from autograder.grading import provenance
                try:
                    with provenance.recording(recorder) if recorder is not None else \
                            contextlib.nullcontext():
                        self.launch(submission, args, outs, case)
                        _synchronize(self.time_limit(case))
                finally:
                    if recorder is not None and hasattr(recorder, "restore"):
                        recorder.restore()
                if recorder is not None:
                    # Judged with the values (with_provenance): a wrong kernel hears what is
                    # wrong with its values first; a right answer must also have come from it.
                    outcome.provenance = recorder.judged()
                for name, (shape, dtype) in shapes.items():
                    host = bufs[name] if tracked else bufs[name].copy_to_host()
                    size = int(np.prod(shape))
                    outcome.outputs[name] = host[:size].reshape(shape)
                    tail = host[size:]
                    outcome.guard_intact[name] = bool(is_poison(tail).all())
            else:
                outs = {name: np.full(shape, poison_value(dtype), dtype)
                        for name, (shape, dtype) in shapes.items()}
                self.launch(submission, dict(case.inputs), outs, case)
                outcome.outputs = outs
        except _Hung as exc:
            outcome.error, outcome.error_kind = str(exc), "hang"
        except Exception as exc:  # learner code may raise anything; report it, don't crash
            kind = "cuda" if type(exc).__name__.startswith("Cuda") else "exception"
            outcome.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            outcome.error_kind = kind
        outcome.seconds = time.perf_counter() - t0
        return outcome

    # ---- judging (never calls learner code) -------------------------------------------------------
    def expected(self, case: Case) -> dict[str, np.ndarray]:
        return self.spec(**{k: (v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                               else v) for k, v in case.inputs.items()}, **_launch_kwargs(case))

    def tolerance_of(self, case: Case, expected: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """How far each output may be from ``expected`` (a problem with its own error bound per
        launch shape overrides this)."""
        return self.tolerance(case.inputs, expected)

    def reference_values(self, case: Case) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(expected, tolerance) of a case in float64, computed once per case: the judge computes
        them while the learner's code runs the case, and :meth:`judge` uses them."""
        if "expected" not in case.memo:
            expected = self.expected(case)
            case.memo["tolerance"] = self.tolerance_of(case, expected)
            case.memo["expected"] = expected
        return case.memo["expected"], case.memo["tolerance"]

    def speed_inputs(self, rng: np.random.Generator, n: int) -> dict[str, Any]:
        """Inputs for a speed run (large n: problems may give a faster generator than make_inputs)."""
        return self._speed_inputs(rng, n)

    @staticmethod
    def inputs_at(inputs: dict[str, Any], idx: np.ndarray) -> dict[str, Any]:
        """The inputs at flat indices ``idx``: arrays as long as the problem sliced, the rest as is."""
        n = next(v.shape[0] for v in inputs.values() if isinstance(v, np.ndarray))
        return {k: (v[idx] if isinstance(v, np.ndarray) and v.shape[:1] == (n,) else v)
                for k, v in inputs.items()}

    def sampled(self, inputs: dict[str, Any], idx: np.ndarray
                ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Expected values and tolerances at flat output indices ``idx`` (the speed test's
        samples): the problem's ``sample_spec``, the elementwise spec at those elements, or (for
        small outputs) the whole spec sliced."""
        if self.sample_spec:
            return self.sample_spec(inputs, idx)
        if self.elementwise:
            at = self.inputs_at(inputs, idx)
            expected = self.expected(Case(size=idx.size, inputs=at))
            return expected, self.tolerance(at, expected)
        size = next(v.shape[0] for v in inputs.values() if isinstance(v, np.ndarray))
        expected = self.expected(Case(size=size, inputs=inputs))
        tolerance = self.tolerance(inputs, expected)
        return ({k: v.reshape(-1)[idx] for k, v in expected.items()},
                {k: np.broadcast_to(v, expected[k].shape).reshape(-1)[idx] for k, v in tolerance.items()})

    def speed_shape(self, size) -> tuple[Any, Any]:
        """(blocks, threads) for the speed test: the problem's own choice; else blocks of the
        visible shape over the whole output (multi-dimensional); else enough 256-thread blocks to
        fill every SM (a grid-stride kernel); 0 blocks for a problem that launches itself."""
        if self.speed_launch:
            return self.speed_launch(size)
        if isinstance(size, tuple) and self.block_sizes:
            threads = self.visible_block_size or self.block_sizes[0]
            return self.blocks_for(size, threads), threads
        if self.block_sizes:
            from autograder.machine.timing import speed_blocks
            return speed_blocks(size, 256), 256
        return 0, 256

    def judge(self, case: Case, outcome: Outcome, show_inputs: bool = True) -> Verdict:
        expected, tolerance = self.reference_values(case)
        dtypes = {name: np.dtype(dt) for name, (_, dt) in self.outputs(case.size).items()}
        verdict = compare(self.name, case.describe(), expected, outcome, tolerance, dtypes,
                          launch=(case.blocks, case.threads))
        if self.value_hint and verdict.hint == GENERIC_VALUE_HINT:
            verdict.hint = self.value_hint
        if verdict.index is not None and show_inputs:
            # Name the inputs behind the first wrong element: the learner can redo it by hand.
            if isinstance(case.size, tuple):
                at = _inputs_at_2d(case.inputs, verdict.index, next(iter(expected.values())).shape)
            else:
                at = [f"{k}[{verdict.index}] = {fmt(v[verdict.index])}" if isinstance(v, np.ndarray)
                      and v.shape[:1] == (case.size,) else f"{k} = {fmt(v)}"
                      for k, v in case.inputs.items() if isinstance(v, (np.ndarray, np.floating))]
            if at:
                verdict.message += "\n  inputs there: " + ", ".join(at)
        return verdict

    def verdict(self, submission: Callable, cases: list[Case]) -> Verdict:
        from autograder.core.progress import Progress
        # Silent if quick. Lines go to stdout: a check cell that writes to stderr scores 0 under
        # nbgrader's rule (in a Jupyter kernel the bar is a widget anyway).
        with Progress(len(cases), f"{self.name}: checking", delay=3.0, stream=sys.stdout) as bar:
            for i, case in enumerate(cases):
                bar.begin(case.describe())
                outcome = self.run(submission, case)
                if outcome.printed:
                    bar.write(_truncate(outcome.printed))
                verdict = with_provenance(self, case, outcome, self.judge(case, outcome))
                if not verdict.passed:
                    verdict.cases_run = i + 1
                    return verdict
        plural = "s" * (len(cases) != 1)
        return Verdict(self.name, True, message=f"{len(cases)} case{plural} ({self.sizes_text(cases)})",
                       cases_run=len(cases))

    # ---- what notebooks call ----------------------------------------------------------------
    def check(self, submission: Callable) -> None:
        """Visible check: prints a verdict; raises CheckFailed (the cell fails) if it is wrong."""
        if _judged_elsewhere(self, "check"):
            return
        verdict = self.verdict(submission, self.cases(hidden=False))
        if not verdict.passed:
            raise CheckFailed(verdict)
        print(verdict)

    def check_hidden(self, submission: Callable) -> None:
        """Hidden check: other sizes, block shapes and seeds; returns None (nbgrader scores it)."""
        if _judged_elsewhere(self, "check_hidden"):
            return
        verdict = self.verdict(submission, self.cases(hidden=True))
        if not verdict.passed:
            verdict.problem += " (hidden tests)"
            raise CheckFailed(verdict)
        print(f"✓ {self.name}: hidden tests passed ({verdict.cases_run} case"
              f"{'s' * (verdict.cases_run != 1)})")

    def check_speed(self, submission: Callable) -> None:
        """Speed test: on a GPU, the judge's own speed test against the course reference and a CPU
        baseline (:func:`autograder.grading.judge.check_speed`, registered as ``SPEED_TEST``)."""
        if _judged_elsewhere(self, "check_speed"):
            return
        if SPEED_TEST[0] is None:
            raise RuntimeError("the speed test is not loaded: `import autograder` first")
        SPEED_TEST[0](self, submission)


PROVENANCE_HINT = ("the exercise is to compute the answer in your kernel: every output element "
                   "must be stored by a thread of your own kernel, from inputs its threads read "
                   "on the device (no NumPy or library result, no host copy of the arrays).")


def with_provenance(problem: Problem, case: Case, outcome: Outcome, verdict: Verdict) -> Verdict:
    """The verdict on a call's values, and then on where they came from (autograder.provenance,
    in ``outcome.provenance``): a right answer the learner's kernel did not compute fails; so does
    a call that copied the exercise's arrays to the host, even with wrong values (an input decoy
    made them wrong). Unread inputs and elements written twice come after the values."""
    provenance = getattr(outcome, "provenance", None) or {}
    if provenance.get("verdict") and outcome.error is None and (
            verdict.passed or provenance.get("before_values")):
        return Verdict(problem.name, False, case.describe(), provenance["verdict"],
                       PROVENANCE_HINT)
    return verdict




def _judged_elsewhere(problem: Problem, kind: str) -> bool:
    """At autograde the notebook's own kernel does not grade: the judge re-runs the code in a
    separate process and writes its verdict into this cell."""
    if not being_graded():
        return False
    print(f"· {problem.name}: {kind} is made by the judge in a separate process; its verdict "
          "replaces this output")
    return True


def _inputs_at_2d(inputs: dict[str, Any], flat: int, out_shape: tuple[int, ...]) -> list[str]:
    """For a multi-dimensional case: the inputs at the wrong element's (row, col), where an input
    has the output's leading shape (an image's pixel, all its channels); scalars as they are."""
    if len(out_shape) < 2:
        return []
    where = tuple(int(i) for i in np.unravel_index(flat, out_shape))
    at = []
    for k, v in inputs.items():
        if isinstance(v, np.ndarray) and v.ndim >= len(where) and v.shape[:len(where)] == out_shape:
            at.append(f"{k}[{', '.join(map(str, where))}] = {fmt(v[where])}")
        elif isinstance(v, np.floating):
            at.append(f"{k} = {fmt(v)}")
    return at


def _launch_kwargs(case: Case) -> dict[str, int]:
    return {"blocks": case.blocks, "threads": case.threads} if case.threads else {}


def _truncate(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def _synchronize(limit: float) -> None:
    """Wait for the GPU, but give up after ``limit`` seconds (a hung kernel never returns)."""
    from numba import cuda
    if not device.current().is_gpu:
        return
    event = cuda.event()
    event.record()
    deadline = time.monotonic() + limit
    while not event.query():
        if time.monotonic() > deadline:
            raise _Hung(f"the kernel was still running after {limit:.0f} s")
        time.sleep(1e-3)
    cuda.synchronize()


_POLL = 0.25     # seconds between looks at a forked run's processor time


def _child_cpu_and_blocked(pid: int) -> tuple[float, bool]:
    """The processor seconds a child has used, and whether every thread of it is waiting
    (asleep: a deadlock, or a sleep; not running, ready to run, or stopped by a signal)."""
    import psutil
    from autograder.grading.sandbox import Watchdog
    try:
        proc = psutil.Process(pid)
    except psutil.Error:
        return 0.0, False
    cpu = Watchdog.cpu_seconds([proc])
    try:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        return cpu, bool(states) and all(state in "SD" for state in states)
    except OSError:                  # no /proc (macOS): the process's own state
        try:
            return cpu, proc.status() in (psutil.STATUS_SLEEPING, psutil.STATUS_DISK_SLEEP)
        except psutil.Error:
            return cpu, False


def _run_forked(work: Callable[[], Outcome], limit: float) -> Outcome:
    """Run ``work`` in a forked child with a time limit (CPU mode only: the simulator is plain
    Python, so a hung kernel can only be stopped by ending the process that runs it).

    The limit is processor time (:class:`~autograder.grading.sandbox.TimeBudget`): a case that
    needs ``limit`` seconds of one core is not stopped early because the machine is busy. A child
    whose threads all wait (a deadlock at a barrier: the simulator's threads sleep) is stopped
    once ``limit`` seconds of wall time have passed, since waiting longer would change nothing."""
    from autograder.grading.sandbox import TimeBudget

    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "multi-threaded, use of fork()"
        pid = os.fork()
    if pid == 0:  # child: run, capture what it prints, send the outcome back, exit at once
        os.close(read_fd)
        code = 0
        try:
            captured = io.StringIO()
            with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
                outcome = work()
            outcome.printed = captured.getvalue()
            payload = pickle.dumps(outcome)
        except BaseException as exc:  # noqa: BLE001 - anything, even SystemExit, is reported
            payload = pickle.dumps(Outcome(error=f"{type(exc).__name__}: {exc}", error_kind="exception"))
            code = 1
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(payload)
        os._exit(code)
    os.close(write_fd)
    chunks, budget, waiting = [], TimeBudget(limit), 0
    with os.fdopen(read_fd, "rb") as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], _POLL)
            if not ready:
                cpu, blocked = _child_cpu_and_blocked(pid)
                waiting = waiting + 1 if blocked else 0
                if budget.passed(cpu) or (time.monotonic() > budget.wall_limit and waiting >= 2):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    return Outcome(error=f"the run was stopped after {limit:.0f} s",
                                   error_kind="hang")
                continue
            chunk = os.read(pipe.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    if not data:
        how = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exit status {os.WEXITSTATUS(status)}")
        return Outcome(error=f"the process running the kernel died ({how}) without an answer",
                       error_kind="crash")
    return pickle.loads(data)
