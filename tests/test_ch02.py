"""Chapter 2's timer exercise (autograder/problems/ch02/timer.py): ``time_ms(launch, repeats)``.

Each learner style runs for real on one small case (CPU mode: the simulator's stream; a GPU: the
spin kernel) and its verdict is checked: correct timers pass, each usual mistake fails with the
message that names it, and a right number that did not come from the learner's own events fails.
The bank (tests/bank/ch02_data_parallel/gpu_timer) judges whole submissions the same way.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pytest
from numba import cuda
from numba.cuda import event_elapsed_time      # imported before any check: still watched

import autograder as ag
from autograder.core.checks import CheckFailed
from autograder.core.spec import Case
from autograder.machine import events
from autograder.problems.ch02 import timer
from autograder.problems.ch02.timer import gpu_timer

GPU = ag.backend.is_gpu


def _case(repeats: int = 5, seed: int = 7) -> Case:
    base = 8.0 if GPU else 6.0
    case = Case(size=repeats, inputs={"repeats": repeats, "base_ms": base, "compile_ms": 60.0,
                                      "seed": seed})
    case.label = gpu_timer.size_label(repeats)
    return case


def _verdict(fn, repeats: int = 5):
    case = _case(repeats)
    return gpu_timer.judge(case, gpu_timer.run_here(fn, case))


def _events_median(launch, repeats, warmups=1, pick=statistics.median, count=None):
    for _ in range(warmups):
        launch()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(repeats if count is None else count):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(event_elapsed_time(start, end))
    return float(pick(times))


# ---- correct timers --------------------------------------------------------------------------

def test_a_timer_made_of_events_passes():
    verdict = _verdict(_events_median)
    assert verdict.passed, verdict


def test_two_warmups_and_events_queued_together_pass():
    def queued(launch, repeats):
        launch()
        launch()
        pairs = [(cuda.event(), cuda.event()) for _ in range(repeats)]
        for start, end in pairs:
            start.record()
            launch()
            end.record()
        pairs[-1][1].synchronize()
        return float(np.median([s.elapsed_time(e) for s, e in pairs]))
    verdict = _verdict(queued, repeats=7)
    assert verdict.passed, verdict


# ---- the usual mistakes, each named ----------------------------------------------------------

def test_a_host_clock_around_the_launch_is_the_launch():
    def perf_counter(launch, repeats):
        launch()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            launch()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)
    verdict = _verdict(perf_counter)
    assert not verdict.passed and "you timed the launch, not the kernel" in verdict.hint


def test_no_warmup_is_named_even_though_the_median_hides_it():
    verdict = _verdict(lambda launch, repeats: _events_median(launch, repeats, warmups=0))
    assert not verdict.passed
    assert "includes the first call" in verdict.message and "compiles" in verdict.hint


def test_the_mean_is_not_the_median():
    verdict = _verdict(lambda launch, repeats: _events_median(launch, repeats,
                                                              pick=statistics.mean))
    assert not verdict.passed and "the mean of your runs" in verdict.message


def test_seconds_are_not_milliseconds():
    verdict = _verdict(lambda launch, repeats: _events_median(launch, repeats) / 1e3)
    assert not verdict.passed and "seconds" in verdict.message


def test_fewer_runs_than_asked():
    verdict = _verdict(lambda launch, repeats: _events_median(launch, repeats,
                                                              count=repeats - 2))
    assert not verdict.passed and "3 timed runs" in verdict.message


def test_one_pair_of_events_around_the_whole_loop_gives_the_mean():
    def whole_loop(launch, repeats):
        launch()
        cuda.synchronize()
        start, end = cuda.event(), cuda.event()
        start.record()
        for _ in range(repeats):
            launch()
        end.record()
        end.synchronize()
        return event_elapsed_time(start, end) / repeats
    verdict = _verdict(whole_loop)
    assert not verdict.passed and "measures their total" in verdict.message


def test_reading_before_the_end_event_is_reached_is_explained():
    def no_sync(launch, repeats):
        launch()
        start, end = cuda.event(), cuda.event()
        start.record()
        launch()
        end.record()
        return cuda.event_elapsed_time(start, end)
    verdict = _verdict(no_sync)
    assert not verdict.passed and "NOT_READY" in verdict.message
    assert "synchronize" in verdict.hint


# ---- a right number that was not measured ----------------------------------------------------

def _true_median(launch, repeats):
    runs = next(c.cell_contents for c in launch.__closure__
                if hasattr(c.cell_contents, "true_ms"))
    return float(np.median(runs.finish()[-repeats:]))


def test_the_true_median_found_without_timing_fails():
    def introspect(launch, repeats):
        for _ in range(repeats + 1):
            launch()
        return _true_median(launch, repeats)
    verdict = _verdict(introspect)
    assert not verdict.passed and "did not come from timing" in verdict.message


def test_events_read_around_nothing_do_not_make_a_found_number_measured():
    def decoy(launch, repeats):
        for _ in range(repeats + 1):
            launch()
        for _ in range(repeats):                # readings, but no launch between the events
            start, end = cuda.event(), cuda.event()
            start.record()
            end.record()
            end.synchronize()
            cuda.event_elapsed_time(start, end)
        return _true_median(launch, repeats)
    verdict = _verdict(decoy)
    assert not verdict.passed and "did not come from timing" in verdict.message


def test_a_number_other_than_the_median_of_ones_own_events_fails():
    def timed_but_found(launch, repeats):
        _events_median(launch, repeats)
        return _true_median(launch, repeats) * 1.03    # near the truth, not what was measured
    verdict = _verdict(timed_but_found)
    assert not verdict.passed and "what your events measured" in verdict.message


# ---- the pieces ------------------------------------------------------------------------------

def test_the_plan_keeps_mean_and_median_apart_in_every_window():
    """The tolerances rely on it: in any window of 5, 7 or 9 runs the median is an ordinary run
    and the mean is at least 15 % above it (a wrong mean cannot land within 5 %)."""
    for seed in range(300):
        plan = timer.plan_ms(seed, 10.0)
        for repeats in (5, 7, 9):
            for first in range(1, 30):
                window = plan[first:first + repeats]
                median, mean = np.median(window), np.mean(window)
                assert median <= 10.0 * timer.JITTER[1]
                assert mean >= 1.15 * median, (seed, repeats, first)


def test_the_watch_sees_only_the_watched_codes_events():
    """Events the check marks as its own are neither records nor readings; an elapsed time is
    reported once, whichever way it was read; nothing is reported outside a watch."""
    own = cuda.event()
    start, end = cuda.event(), cuda.event()
    with events.watching() as watch:
        watch.ignore(own)
        own.record()
        start.record()
        watch.launched()
        end.record()
        end.synchronize()
        cuda.event_elapsed_time(start, end)
        start.elapsed_time(end)
        cuda.event_elapsed_time(own, end)
    assert watch.records == 2
    assert [(r.lo, r.hi) for r in watch.readings] == [(0, 1), (0, 1)]
    start.record()
    end.record()
    end.synchronize()
    event_elapsed_time(start, end)
    assert len(watch.readings) == 2


def test_the_visible_check_passes_the_chapters_solution_and_fails_a_wrong_one():
    gpu_timer.check(_events_median)
    with pytest.raises(CheckFailed, match="mean"):
        gpu_timer.check(lambda launch, repeats: _events_median(launch, repeats,
                                                               pick=statistics.mean))


@pytest.mark.gpu
def test_on_a_gpu_the_courses_own_events_are_not_the_learners():
    """On a GPU the course times each launch with events of its own: a timer that records none
    still has no readings, and the true durations are close to what a learner's events read."""
    case = _case()
    outcome = gpu_timer.run_here(lambda launch, repeats: _true_median(launch, repeats)
                                 if [launch() for _ in range(repeats + 1)] else 0.0, case)
    assert np.isnan(outcome.outputs["readings"][:, 2]).all()
    assert "did not come from timing" in gpu_timer.judge(case, outcome).message
    verdict = _verdict(_events_median, repeats=9)
    assert verdict.passed, verdict


class _FakeGpuEvent:
    """A GPU event as the watch sees it: a time the GPU gave it (ms)."""

    def __init__(self, t):
        self.t = t

    def elapsed_time(self, end):
        return end.t - self.t


def test_on_a_gpu_a_reading_is_bracketed_by_the_courses_events():
    """On a GPU, an event recorded while the GPU is idle gets the time the GPU reaches it, so a
    course event recorded by Python right behind the learner's start can be ~0.1 ms late (seen on
    the H200: a correct timer's 12.38 ms against 12.25 ms from the course's events). The course's
    events before and after each record bracket the learner's reading, and the check accepts any
    median inside the bracket (and nothing far outside it)."""
    watch = events.Watch()
    start_before, start_after = _FakeGpuEvent(0.0), _FakeGpuEvent(0.13)   # the GPU was idle
    end_before, end_after = _FakeGpuEvent(12.38), _FakeGpuEvent(12.38)    # queued behind the kernel
    watch._stamps = [(start_before, start_after), (end_before, end_after)]
    reading = events.Reading(1, 2, 1, 2, 0, 1)
    least, most = watch.measured_again(reading)
    assert least == pytest.approx(12.25) and most == pytest.approx(12.38)

    repeats = 5
    case = _case(repeats)
    table = np.full((timer.MAX_READINGS, 6), np.nan)
    for k in range(1, repeats + 1):
        table[k - 1] = (k, k + 1, least, most, 0, 1)
    true_ms = np.full(timer.MAX_LAUNCHES, np.nan)
    true_ms[:repeats + 1] = [300.0] + [12.3] * repeats

    def judged(value):
        outcome = type("Outcome", (), {"error": None, "outputs": {
            "result": np.array([value]), "counts": np.array([repeats + 1, 2 * repeats]),
            "true_ms": true_ms, "readings": table}})()
        return gpu_timer.judge(case, outcome)

    assert judged(12.38).passed, judged(12.38)       # the learner's own median
    assert judged(12.25).passed
    far = judged(11.7)
    assert not far.passed and "median of what your events measured" in far.message
