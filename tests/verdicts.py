"""The verdict of a check, as a test sees it: shared by the chapter tests (tests/test_chNN.py)."""

from __future__ import annotations

from autograder.checks import CheckFailed


def verdict_text(problem, fn, hidden: bool = True) -> str | None:
    """None if ``fn`` passes the problem's visible check (and hidden one, with ``hidden``),
    else the failing verdict's text."""
    try:
        problem.check(fn)
        if hidden:
            problem.check_hidden(fn)
    except CheckFailed as failure:
        return str(failure)
    return None


def assert_judged(problem, fn, expected, hidden: bool = True) -> None:
    """``expected`` None: ``fn`` must pass. A string: it must fail with that text in the verdict."""
    failure = verdict_text(problem, fn, hidden)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, "passed but is wrong"
        assert expected in failure, failure
