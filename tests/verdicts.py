"""The verdict of a check, as a test sees it: shared by the chapter tests (tests/test_chNN.py)."""

from __future__ import annotations

import autograder as ag
from autograder.checks import CheckFailed


class NamedInCpuMode(str):
    """A fragment of a verdict that only CPU mode's visible cases can give: they are small and
    the simulator checks every index, so the check names the bug. On a GPU the first failing case
    is a large one and the verdict may name only the wrong elements; the kernel must still fail."""


def required(fragment: str) -> bool:
    """Is this fragment of an expected verdict required on this backend?"""
    return not (isinstance(fragment, NamedInCpuMode) and ag.backend.is_gpu)


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
        assert expected in failure or not required(expected), failure
