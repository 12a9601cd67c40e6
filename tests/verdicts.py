"""The verdict of a check, as a test sees it: shared by the chapter tests (tests/test_chNN.py)."""

from __future__ import annotations

import pytest

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


def judge_entry(problem, table: dict, name: str, hidden: bool = True) -> None:
    """``table[name]`` is (kernel, None if it is right, else fragments of its CPU-mode verdict): a
    right kernel must pass, a wrong one fail, in CPU mode for the reason given. On a GPU a kernel
    whose verdict is a race or an out-of-bounds access is skipped: a race may not show there, and
    an illegal address ends the process's CUDA context, failing every later GPU test in it (the
    judge restarts its student process; a test process cannot be). A third item, where given,
    says whether the kernel is wrong only in a way a GPU may hide (a race, a warp CPU mode splits
    on purpose); False: a wrong answer there too, as when every block stores its whole histogram
    over the others'."""
    fn, expected, *hides = table[name]
    if ag.backend.is_gpu and expected:
        if hides[0] if hides else any("race" in fragment for fragment in expected):
            pytest.skip("a race (or a warp CPU mode splits on purpose) may not show on a GPU; "
                        "CPU mode catches it every time")
        if any("out of bounds" in fragment for fragment in expected):
            pytest.skip("an out-of-bounds access ends a GPU process's CUDA context: CPU mode "
                        "checks every index and names the bug")
    failure = verdict_text(problem, fn, hidden)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        if not ag.backend.is_gpu:
            for fragment in expected:
                assert fragment in failure, (fragment, failure)
