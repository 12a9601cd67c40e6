"""Do the checks pass every correct submission and fail every wrong one, with a useful message?"""

import numpy as np
import pytest

import autograder as ag
from autograder.checks import CheckFailed

from submissions import CASES


def _verdict(problem, fn):
    """Visible check first, then the hidden one; return the failure text or None."""
    try:
        problem.check(fn)
        problem.check_hidden(fn)
    except CheckFailed as failure:
        return str(failure)
    return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_submission_verdict(name):
    """Is each catalogued submission judged as it should be (pass, or fail for the right reason)?"""
    problem, fn, expected = CASES[name]
    failure = _verdict(problem, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        if not ag.backend.is_gpu:
            assert expected in failure, failure


def test_visible_only_passes_visible_but_not_hidden():
    """Does special-casing the visible sizes pass the visible check yet fail the hidden one?"""
    problem, fn, _ = CASES["add_vectors_visible_only"]
    problem.check(fn)
    with pytest.raises(CheckFailed):
        problem.check_hidden(fn)


def test_hidden_cases_depend_on_secret(monkeypatch):
    """Do hidden inputs change with the instructor's secret seed, while visible ones stay fixed?"""
    p = ag.problems.ch02.vector_add
    monkeypatch.setenv("AAG_SECRET_SEED", "one")
    a_hidden, a_visible = p.cases(hidden=True), p.cases()
    monkeypatch.setenv("AAG_SECRET_SEED", "two")
    b_hidden, b_visible = p.cases(hidden=True), p.cases()
    assert [c.size for c in a_hidden] != [c.size for c in b_hidden] or not np.array_equal(
        a_hidden[0].inputs["x"], b_hidden[0].inputs["x"])
    assert np.array_equal(a_visible[0].inputs["x"], b_visible[0].inputs["x"])


def test_sizes_are_not_block_multiples():
    """Is every visible and hidden size of a kernel exercise off the common block sizes?"""
    for p in ag.problems.ALL.values():
        if not p.on_device:
            continue
        for c in p.cases() + p.cases(hidden=True):
            for side in (c.size if isinstance(c.size, tuple) else (c.size,)):   # shapes: each side
                if side > 1:
                    assert side % 32 != 0 or side % 128 != 0, (p.name, c.size)


def test_check_failure_names_size_and_element():
    """Does a wrong-value verdict say which size, which element, expected and got?"""
    problem, fn, _ = CASES["saxpy_wrong_order"]
    with pytest.raises(CheckFailed) as info:
        problem.check(fn)
    text = str(info.value)
    assert "n = " in text and "expected" in text and "got" in text and "`out`[" in text


def test_a_hang_is_remembered_for_that_submission_only(monkeypatch):
    """A hang is remembered so that it costs one timeout; once that submission is gone, a new one
    that happens to get its id (CPython reuses them) must still be run, never called hung."""
    from autograder.grading import problem as problem_module
    problem, fn, _ = CASES["add_vectors_ok"]
    stale = (object(), "the run was stopped after 3 s (it hung on an earlier case too)")
    monkeypatch.setitem(problem_module._hung_submissions, id(fn), stale)
    outcome = problem.run(fn, problem.cases()[0])
    assert outcome.error is None, outcome.error
    monkeypatch.setitem(problem_module._hung_submissions, id(fn), (fn, stale[1]))
    assert problem.run(fn, problem.cases()[0]).error_kind == "hang"


def _small_speed_size(problem):
    """The problem's speed size shrunk to something quick to make: at most 4,099 elements (4,096
    where the speed inputs want a power of two), or 67 along each side of a shape."""
    n = problem.gpu_sizes.speed
    if isinstance(n, int):
        return (min(n, 4099), 4096)
    return (tuple(min(int(d), 67) for d in n),)


def test_every_cpu_baseline_takes_its_speed_tests_inputs():
    """The speed test times each CPU baseline with the speed inputs and outputs as keywords,
    scalars the kernel alone needs included (a warp size, a salt): a baseline that does not take
    one of them stops the grading of every speed cell of its exercise on a GPU. Checked on the
    signature, with the inputs made at a small size."""
    import inspect
    from autograder.problems import ALL
    refused = []
    for problem in ALL.values():
        if not problem.speed:
            continue
        for size in _small_speed_size(problem):
            try:
                args = {**problem.speed_inputs(np.random.default_rng(0), size),
                        **problem.outputs(size)}
                break
            except ValueError:
                continue
        else:
            refused.append(f"{problem.name}: no small speed inputs")
            continue
        for key, baseline in problem.baselines.items():
            if not baseline.at_speed_size:
                continue
            try:
                inspect.signature(baseline.run).bind(**args)
            except TypeError as exc:
                refused.append(f"{problem.name} baseline {key!r}: {exc}")
    assert not refused, refused
