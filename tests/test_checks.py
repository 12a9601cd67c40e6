"""Are the tolerances tight enough to catch lower precision yet never fail correct fp32 code, and
does the isolation around a run contain hangs, crashes and prints?"""

import os

import numpy as np
import pytest

import autograder as ag
from autograder.checks import U32, Outcome, compare, gamma, poison_value
from autograder.problem import _run_forked

ch01, ch02 = ag.problems.ch01, ag.problems.ch02


def _cases(problem, seeds=range(20)):
    for seed in seeds:
        yield from problem.cases(hidden=True, seed=seed)


def test_fp32_addition_always_within_tolerance():
    """Does NumPy's float32 addition (correctly rounded) pass every hidden case of vector add?"""
    for case in _cases(ch02.vector_add):
        got = {"out": case.inputs["x"] + case.inputs["y"]}
        verdict = ch02.vector_add.judge(case, Outcome(outputs=got))
        assert verdict.passed, verdict


def test_fp16_addition_fails():
    """Does an addition done in float16 fail, at every seed?"""
    for case in _cases(ch02.vector_add):
        x, y = case.inputs["x"], case.inputs["y"]
        got = {"out": (x.astype(np.float16) + y.astype(np.float16)).astype(np.float32)}
        assert not ch02.vector_add.judge(case, Outcome(outputs=got)).passed


def test_saxpy_two_roundings_and_fma_pass():
    """Do both float32 evaluation orders of a*x + y (two roundings, or one fused) pass?"""
    for case in _cases(ch01.saxpy):
        a, x, y = case.inputs["a"], case.inputs["x"], case.inputs["y"]
        two = (a * x) + y
        fused = (np.float64(a) * x.astype(np.float64) + y).astype(np.float32)
        for got in (two, fused):
            assert ch01.saxpy.judge(case, Outcome(outputs={"out": got})).passed


def test_saxpy_in_bfloat_like_precision_fails():
    """Does SAXPY computed with a 12-bit mantissa fail?"""
    for case in _cases(ch01.saxpy, range(5)):
        a, x, y = case.inputs["a"], case.inputs["x"], case.inputs["y"]
        exact = np.float64(a) * x + y
        rounded = np.frexp(exact)
        got = np.ldexp(np.round(rounded[0] * 2 ** 12) / 2 ** 12, rounded[1]).astype(np.float32)
        assert not ch01.saxpy.judge(case, Outcome(outputs={"out": got})).passed


def test_nan_never_matches_and_poison_is_reported():
    """Is an output left NaN reported as never written, even where the tolerance is infinite?"""
    exp = {"out": np.zeros(10)}
    got = Outcome(outputs={"out": np.full(10, np.nan, np.float32)})
    v = compare("p", "n = 10", exp, got, {"out": np.full(10, np.inf)}, {"out": np.float32})
    assert not v.passed and "nothing was written" in v.message


def test_nan_matches_only_where_the_spec_is_nan():
    """An input with a NaN makes the spec NaN from there on (a scan): NaN there is right, a
    number there is wrong, and a NaN where the spec is a number is still wrong."""
    exp = {"out": np.array([1.0, 2.0, np.nan, np.nan])}
    tol = {"out": np.full(4, 1e-6)}
    right = np.array([1.0, 2.0, np.nan, np.nan], np.float32)
    assert compare("p", "n = 4", exp, Outcome(outputs={"out": right}), tol,
                   {"out": np.float32}).passed
    number_for_nan = np.array([1.0, 2.0, 3.0, np.nan], np.float32)
    v = compare("p", "n = 4", exp, Outcome(outputs={"out": number_for_nan}), tol,
                {"out": np.float32})
    assert not v.passed and "`out`[2]" in v.message
    nan_for_number = np.array([1.0, np.nan, np.nan, np.nan], np.float32)
    v = compare("p", "n = 4", exp, Outcome(outputs={"out": nan_for_number}), tol,
                {"out": np.float32})
    assert not v.passed and "`out`[1]" in v.message


def test_a_missing_block_offset_is_named():
    """`i = cuda.threadIdx.x` writes the first block's elements only, however many blocks run: the
    verdict says so and points at the block offset, not at the grid's size or `i < n - 1`."""
    exp = np.arange(1000, dtype=np.float64)
    got = np.full(1000, np.nan, np.float32)
    got[:128] = exp[:128]
    tol = {"out": np.zeros(1000)}
    args = ("add", "n = 1000", {"out": exp}, Outcome(outputs={"out": got}), tol,
            {"out": np.dtype(np.float32)})
    v = compare(*args, launch=(8, 128))
    assert not v.passed and "one block's worth, though 8 blocks" in v.message
    assert "blockIdx" in v.hint
    # one block launched (or the grid too small): the grid-size hint, as before
    assert "fewer threads than elements" in compare(*args, launch=(1, 128)).hint
    got[:256] = exp[:256]
    assert "fewer threads than elements" in compare(*args, launch=(8, 128)).hint


def test_wrong_dtype_is_rejected():
    """Does a float64 result fail where float32 is asked for, even with equal values?"""
    exp = {"out": np.ones(4)}
    got = Outcome(outputs={"out": np.ones(4, np.float64)})
    v = compare("p", "n = 4", exp, got, {"out": np.zeros(4)}, {"out": np.dtype(np.float32)})
    assert not v.passed and "float64" in v.message


def test_guard_zone_write_is_reported():
    """Does a write past the end of an output fail with a bounds-check hint?"""
    exp = {"out": np.ones(4)}
    got = Outcome(outputs={"out": np.ones(4, np.float32)}, guard_intact={"out": False})
    v = compare("p", "n = 4", exp, got, {"out": np.zeros(4)}, {"out": np.dtype(np.float32)})
    assert not v.passed and "past the end" in v.message


def test_gamma_and_poison():
    """Are gamma_k and the poison values what the error analysis assumes?"""
    assert gamma(2) == pytest.approx(2 * U32, rel=1e-6)
    assert np.isnan(poison_value(np.float32))
    assert poison_value(np.int32) == np.iinfo(np.int32).min


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (Linux or macOS)")
def test_forked_run_contains_hang_crash_and_prints():
    """Does the forked runner stop a hang at its limit, report a hard exit, and replay prints?"""
    def hang():
        while True:
            pass
    out = _run_forked(hang, limit=1.0)
    assert out.error_kind == "hang"

    def die():
        os._exit(3)
    out = _run_forked(die, limit=10.0)
    assert out.error_kind == "crash" and "exit status 3" in out.error

    def chatty():
        print("hello from the kernel")
        return Outcome(outputs={"out": np.arange(3)})
    out = _run_forked(chatty, limit=10.0)
    assert out.printed.strip() == "hello from the kernel"
    assert np.array_equal(out.outputs["out"], np.arange(3))
