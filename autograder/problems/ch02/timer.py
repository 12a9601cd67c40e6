"""2.3: ``time_ms(launch, repeats)``, a GPU timer made of CUDA events.

The learner's function receives ``launch`` (starts work on the GPU and returns at once) and must
return the median time of one run, in milliseconds, over ``repeats`` timed runs after a warm-up.
The check builds ``launch`` as a kernel whose first call compiles and whose later calls each take
a different time (a random base per case, ±25 % jitter, and every third run about four times
longer: a mean and a median then differ by far more than the tolerance). It knows the true
duration of every run: in CPU mode, the work it queued on the simulator's stream
(:mod:`autograder.machine.simulator.stream`); on a GPU, a spin kernel (a loop of
``cuda.nanosleep``) timed by the course's own events around each launch.

It also watches the learner's events (:mod:`autograder.machine.events`): which were recorded
between which launches, and which elapsed times were read. The answer passes when it is within
5 % of the median of the true durations of the runs the learner timed, equals (within 1 %) the
median of what the learner's own events measured, and those are ``repeats`` runs of one launch
each, none of them the first (compiling) call. The verdicts name the usual mistakes: a host
clock around an asynchronous launch, no warm-up, the mean, seconds, too few runs.
"""

from __future__ import annotations

import math
import os
import time
from typing import Callable

import numpy as np

from autograder.core.checks import Verdict, describe_exception
from autograder.core.spec import CHECK_TIMEOUT_ENV, Case, Sizes
from autograder.grading.problem import Problem
from autograder.machine import device, events
from autograder.problems.kit.kernels import KernelCache

cuda = None     # numba.cuda, bound by KernelCache on first use (the simulator swaps it here)
_kernels = KernelCache(globals(), "cuda")

MAX_LAUNCHES = 64        # calls of launch() one case allows (a timer needs repeats + a few)
MAX_READINGS = 256       # elapsed times kept per case (the last ones)
OUTLIER_EVERY = 3        # every third run is slow: fewer than half of any window, so the
OUTLIER = (3.5, 4.5)     # median is an ordinary run while the mean is pulled far up
JITTER = (0.75, 1.25)
NEAR_TRUTH = 0.05        # the answer vs the median of the true durations
NEAR_OWN = 0.01          # the answer vs the median of the learner's own readings
CALIBRATION_SLEEPS = 4000


def _near(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * abs(b)


def plan_ms(seed: int, base_ms: float, count: int = MAX_LAUNCHES) -> np.ndarray:
    """How long each call's work takes, in ms: ``base_ms`` with jitter, every third one slow."""
    rng = np.random.default_rng(seed)
    factors = rng.uniform(*JITTER, size=count)
    phase = int(rng.integers(OUTLIER_EVERY))
    slow = np.arange(count) % OUTLIER_EVERY == phase
    factors[slow] = rng.uniform(*OUTLIER, size=int(slow.sum()))
    return base_ms * factors


# ---- the work that launch() starts ---------------------------------------------------------------

def _fresh_spin():
    """A new spin kernel (GPU): a new dispatcher, so its first launch really compiles."""
    _kernels.bind()

    @cuda.jit
    def spin(sleeps, out):
        for i in range(sleeps):
            cuda.nanosleep(1000)       # about a microsecond each; the course times the total
        out[0] = sleeps
    return spin


class Runs:
    """What the course's ``launch`` did: the true duration of each call's work (ms), filled in
    by :meth:`finish` once the GPU is done. On a GPU the course's own events are ignored by the
    :class:`~autograder.machine.events.Watch`."""

    def __init__(self, watch: events.Watch | None = None, limit: int = MAX_LAUNCHES):
        self.watch, self.limit = watch, limit
        self.calls = 0
        self.true_ms: list[float] = []
        self._pairs: list = []

    def finish(self) -> list[float]:
        from numba import cuda
        cuda.synchronize()
        if self._pairs:
            self.true_ms = [cuda.event_elapsed_time(s, e) for s, e in self._pairs]
        return self.true_ms


def make_launch(durations_ms: Callable[[int], float], compile_ms: float = 300.0,
                watch: events.Watch | None = None, limit: int = MAX_LAUNCHES):
    """``(launch, runs)``: ``launch()`` starts the work of call k, taking ``durations_ms(k)``,
    and returns at once; its first call compiles first (a fresh kernel on a GPU; in CPU mode a
    pause of ``compile_ms`` on the host). ``runs`` (:class:`Runs`) holds the true durations."""
    runs = Runs(watch, limit)
    gpu = device.current().is_gpu
    state: dict = {}

    def launch():
        k = runs.calls
        if k >= runs.limit:
            raise RuntimeError(f"launch() was called more than {runs.limit} times: a timer needs "
                               "one warm-up call and then one call per timed run")
        runs.calls += 1
        if gpu:
            _launch_on_gpu(k, durations_ms(k), runs, state)
        else:
            from autograder.machine.simulator import stream
            if k == 0:
                time.sleep(compile_ms / 1e3)      # compiling, on the host, before anything runs
            if runs.watch is not None:
                runs.watch.launched()
            ms = float(durations_ms(k))
            stream.submit(ms)
            runs.true_ms.append(ms)

    return launch, runs


def _launch_on_gpu(k: int, ms: float, runs: Runs, state: dict) -> None:
    from numba import cuda
    if k == 0:
        state["kernel"] = kernel = _fresh_spin()
        state["out"] = out = cuda.device_array(1, dtype=np.int64)
        kernel[1, 1](0, out)                      # compiles (the first call's cost)
        cuda.synchronize()
        start, end = cuda.event(), cuda.event()
        if runs.watch is not None:
            runs.watch.ignore(start)
            runs.watch.ignore(end)
        sleeps = CALIBRATION_SLEEPS
        while True:          # how long one nanosleep of the loop takes, from a run of 2 ms or more
            start.record()
            kernel[1, 1](sleeps, out)
            end.record()
            end.synchronize()
            elapsed = cuda.event_elapsed_time(start, end)
            if elapsed >= 2.0 or sleeps >= CALIBRATION_SLEEPS << 12:
                break
            sleeps *= 8
        state["ms_per_sleep"] = max(elapsed, 1e-3) / sleeps
    start, end = cuda.event(), cuda.event()
    if runs.watch is not None:
        runs.watch.ignore(start)
        runs.watch.ignore(end)
        runs.watch.launched()
    start.record()
    state["kernel"][1, 1](max(1, int(ms / state["ms_per_sleep"])), state["out"])
    end.record()
    runs._pairs.append((start, end))


def busy_kernel(ms: float = 20.0):
    """For the notebook: ``launch()`` starts about ``ms`` milliseconds of work on the GPU and
    returns at once; its first call also compiles the kernel (in CPU mode, a pause of about
    0.3 s stands for it, and the work is a span of time on the simulator's stream)."""
    launch, _ = make_launch(lambda k: ms, compile_ms=300.0, limit=1 << 62)
    return launch


# ---- the exercise --------------------------------------------------------------------------------

PERF_COUNTER = (
    "you timed the launch, not the kernel: launch() returns as soon as the work is queued, "
    "before the GPU has done it, so a host clock around it measures only the launch. Record a "
    "CUDA event before and after the launch and wait for the end event (end.synchronize()) "
    "before reading cuda.event_elapsed_time(start, end).")
NO_WARMUP = (
    "the first call of launch() also compiles the kernel, on the host, before the GPU runs "
    "anything: call launch() once before you time (a warm-up), and synchronize, so the "
    "compilation stays out of your runs.")
MEAN = (
    "the exercise asks for the median: one slow run (another program on the GPU, a clock "
    "change) pulls the mean up, but moves the median only a little. Sort the times and take the "
    "middle one (statistics.median or np.median).")
SECONDS = ("cuda.event_elapsed_time already returns milliseconds: return its value as it is "
           "(time.perf_counter() gives seconds, events do not).")
FEWER = ("time `repeats` runs, each a launch between its own start and end events (or one pair "
         "of events used again for each run), after the warm-up.")
FROM_EVENTS = (
    "record a CUDA event before and after each timed launch (start.record(), launch(), "
    "end.record()), wait for the end event, and return the median of what "
    "cuda.event_elapsed_time(start, end) gave you.")
NOT_READY = ("read an elapsed time only once the GPU has reached the end event: call "
             "end.synchronize() (or cuda.synchronize()) first.")
NEVER_RECORDED = ("both events must be recorded (start.record(), end.record()) before "
                  "cuda.event_elapsed_time(start, end) can compare them.")


class TimerProblem(Problem):
    """``time_ms(launch, repeats)``: cases are ``repeats`` values, each with its own durations;
    the outputs are the returned value, the true durations and the learner's event readings."""

    def cases(self, hidden: bool = False, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        gpu = device.current().is_gpu
        cases = []
        for repeats in (self.sizes.hidden if hidden else self.sizes.visible):
            base = float(rng.uniform(8.0, 16.0) if gpu else rng.uniform(10.0, 20.0))
            case = Case(size=int(repeats), inputs={
                "repeats": int(repeats), "base_ms": base,
                "compile_ms": float(rng.uniform(200.0, 300.0)),
                "seed": int(rng.integers(1 << 31))})
            case.label = self.size_label(case.size)
            cases.append(case)
        return cases

    def time_limit(self, case: Case) -> float:
        if os.environ.get(CHECK_TIMEOUT_ENV):
            return float(os.environ[CHECK_TIMEOUT_ENV])
        return 60.0 if device.current().is_gpu else 30.0

    def reference_values(self, case: Case):
        return {}, {}          # judged from the true durations the run brings back

    # -- judging (never calls learner code) ------------------------------------------------------
    def judge(self, case: Case, outcome, show_inputs: bool = True) -> Verdict:
        def fail(message: str, hint: str = "") -> Verdict:
            return Verdict(self.name, False, case.describe(), message, hint)

        if outcome.error:
            error = outcome.error.strip().splitlines()[-1][:500]
            hint = (NOT_READY if "NOT_READY" in error else
                    NEVER_RECORDED if "INVALID_HANDLE" in error else
                    describe_exception(outcome.error, outcome.error_kind))
            return fail(error, hint)
        out = outcome.outputs
        try:
            value = float(np.asarray(out["result"]).reshape(-1)[0])
            counts = np.asarray(out["counts"], dtype=np.float64).reshape(-1)
            true_all = np.asarray(out["true_ms"], dtype=np.float64).reshape(-1)
            table = np.asarray(out["readings"], dtype=np.float64).reshape(MAX_READINGS, 6)
        except (KeyError, ValueError, IndexError, TypeError):
            return fail("the grader's record of this run is missing or damaged",
                        "return a number from time_ms; leave the grader alone.")
        repeats = int(case.inputs["repeats"])
        calls = int(counts[0])
        true = true_all[:calls]
        if calls == 0:
            return fail("time_ms never called launch(): there was nothing to time",
                        FROM_EVENTS)
        if not math.isfinite(value) or value <= 0:
            return fail(f"time_ms returned {value!r}: a time is a positive number of "
                        "milliseconds", FROM_EVENTS)
        last = true[-repeats:]
        typical = float(np.median(last))
        readings = _readings(table)
        covering = [r for r in readings if r[1] > r[0]]
        used = covering[-repeats:]
        got = f"time_ms returned {value:.4g} ms"
        if not used:
            if value < 0.25 * typical:
                return fail(f"{got}, but each run of the kernel took about {typical:.3g} ms",
                            PERF_COUNTER)
            if _near(value * 1e3, typical, NEAR_TRUTH):
                return fail(f"{got}: that is the runs' median in seconds ({typical:.4g} ms)",
                            SECONDS)
            return fail(f"{got}, but no elapsed time was read from events of yours recorded "
                        "around a launch: the number did not come from timing the GPU with "
                        "events", FROM_EVENTS)
        # Each reading's true value lies in [least, most] (the course's events around each of the
        # learner's records, on a GPU; one value in CPU mode), so their median lies between the
        # medians of the ends.
        own_least = float(np.median([r[2] for r in used]))
        own_most = float(np.median([r[3] for r in used]))
        own = 0.5 * (own_least + own_most)
        if any(r[0] == 0 for r in used):
            first = next(r for r in used if r[0] == 0)
            return fail(f"{got}; one of your timed runs includes the first call of launch(), "
                        f"which measured {first[2]:.4g} ms while a run takes about "
                        f"{typical:.3g} ms", NO_WARMUP)
        if _near(value * 1e3, own, 2 * NEAR_OWN) or _near(value * 1e3, typical, NEAR_TRUTH):
            return fail(f"{got}: that is your runs' median, {own:.4g} ms, in seconds", SECONDS)
        covered = sorted({k for r in used for k in range(r[0], min(r[1], calls))})
        timed = true[covered]
        expected = float(np.median(timed))
        if any(r[1] - r[0] > 1 for r in used):
            if _near(value, float(np.mean(timed)), 3 * NEAR_OWN):
                return fail(f"{got}: one pair of events around {len(covered)} launches measures "
                            f"their total, and dividing it gives the mean ({np.mean(timed):.4g} "
                            f"ms), not the median ({expected:.4g} ms)", MEAN + " " + FEWER)
            return fail(f"{got}; a timed run of yours held several launches between its two "
                        "events", FEWER)
        if _near(value, float(np.mean(timed)), 3 * NEAR_OWN) and \
                not _near(value, expected, NEAR_TRUTH):
            return fail(f"{got}: that is the mean of your runs; their median is "
                        f"{expected:.4g} ms", MEAN)
        if len(covered) < repeats:
            return fail(f"{got} from {len(covered)} timed run{'s' * (len(covered) != 1)}; "
                        f"time_ms(launch, {repeats}) asks for {repeats}", FEWER)
        if not own_least * (1 - NEAR_OWN) <= value <= own_most * (1 + NEAR_OWN):
            return fail(f"{got}, but the median of what your events measured is {own:.4g} ms: "
                        "return that", FROM_EVENTS)
        if not _near(value, expected, NEAR_TRUTH):
            return fail(f"{got}, but the median of the {len(covered)} runs you timed is "
                        f"{expected:.4g} ms (your events measured "
                        f"{', '.join(f'{r[2]:.3g}' for r in used)} ms)", FROM_EVENTS)
        return Verdict(self.name, True, case.describe())


def _readings(table: np.ndarray) -> list[tuple[int, int, float, float]]:
    """The learner's readings, in the order read, each event pair at each position once:
    (first launch, launch after the last, least ms, most ms)."""
    seen, found = set(), []
    for lo, hi, least, most, a, b in table:
        if not (np.isfinite(least) and np.isfinite(most)):
            continue
        key = (int(lo), int(hi), int(a), int(b))
        if key in seen:
            continue
        seen.add(key)
        found.append((int(lo), int(hi), float(least), float(most)))
    return found


def _outputs(repeats):
    return {"result": ((1,), np.float64), "counts": ((2,), np.float64),
            "true_ms": ((MAX_LAUNCHES,), np.float64),
            "readings": ((MAX_READINGS, 6), np.float64)}


def _measured_again(watch) -> list:
    """(reading, (least, most) ms) for each reading of the watch, its time taken again from the
    course's stamps of the two records it was read after (:meth:`events.Watch.measured_again`):
    the watch is reachable from the learner's code, and a reading appended or edited there must
    not count as a measurement."""
    out = []
    for r in watch.readings:
        try:
            ms = watch.measured_again(r)
        except Exception:          # an event that never completed: no measurement
            ms = None
        if ms is not None:
            out.append((r, ms))
    return out


def _call_timer(time_ms, inputs, outputs, case):
    """One case: a fresh launch (its first call compiles), the learner's time_ms watched."""
    repeats = int(inputs["repeats"])
    plan = plan_ms(int(inputs["seed"]), float(inputs["base_ms"]))
    with events.watching() as watch:
        launch, runs = make_launch(lambda k: plan[k], float(inputs["compile_ms"]), watch,
                                   limit=min(MAX_LAUNCHES, 3 * repeats + 10))
        try:
            got = time_ms(launch, repeats)
        finally:
            true = runs.finish() if runs.calls else []
    try:
        value = float(got)
    except (TypeError, ValueError):
        raise TypeError(f"time_ms must return a number of milliseconds; it returned "
                        f"{got!r}") from None
    outputs["result"][0] = value
    outputs["counts"][:] = (runs.calls, watch.records)
    outputs["true_ms"][:] = np.nan
    outputs["true_ms"][:len(true)] = true
    numbers: dict[int, int] = {}
    rows = [(r.lo, r.hi, *ms, numbers.setdefault(r.start, len(numbers)),
             numbers.setdefault(r.end, len(numbers)))
            for r, ms in _measured_again(watch)][-MAX_READINGS:]
    outputs["readings"][:] = np.nan
    if rows:
        outputs["readings"][:len(rows)] = rows


gpu_timer = TimerProblem(
    "gpu_timer", title="A GPU timer: CUDA events, a warm-up, the median",
    spec=lambda **_: {}, make_inputs=lambda rng, n: {}, outputs=_outputs,
    tolerance=lambda inputs, expected: {}, launch=_call_timer, on_device=False,
    # repeats per case (odd: the median is one run's time); each case is a fresh kernel
    cpu_sizes=Sizes(visible=(5, 7), hidden=(5, 7, 9)),
    gpu_sizes=Sizes(visible=(5, 7), hidden=(5, 7, 9)),
    size_label=lambda repeats: f"time_ms(launch, repeats={repeats})",
)
