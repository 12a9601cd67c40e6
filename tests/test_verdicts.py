"""tests/verdicts.judge_entry, the chapters' shared judging of their tables of kernels: on a GPU it
skips what a GPU may hide or what would end the process's CUDA context, and nothing else."""

from __future__ import annotations

import types

import pytest

import verdicts


@pytest.fixture
def on_gpu(monkeypatch):
    """judge_entry as it runs on a GPU, with each kernel's verdict given by the kernel itself."""
    monkeypatch.setattr(verdicts, "ag", types.SimpleNamespace(
        backend=types.SimpleNamespace(is_gpu=True)))
    monkeypatch.setattr(verdicts, "verdict_text", lambda problem, fn, hidden=True: fn())


def _run(name, entry):
    verdicts.judge_entry(None, {name: entry}, name)


def test_a_gpu_skips_races_and_out_of_bounds_kernels(on_gpu):
    for entry in [(lambda: "x", ("shared-memory race on `s`",)),
                  (lambda: "x", ("out of bounds", "guard")),
                  (lambda: None, ("counts too many",), True)]:     # flagged: may hide on a GPU
        with pytest.raises(pytest.skip.Exception):
            _run("k", entry)


def _judged(name, entry):
    try:
        _run(name, entry)
    except pytest.skip.Exception as why:
        pytest.fail(f"{name} was skipped on a GPU: {why}")


def test_a_gpu_judges_the_rest(on_gpu):
    _judged("right", (lambda: None, None))
    _judged("wrong", (lambda: "counts too many", ("bins",)))      # fragments are CPU mode's
    # a race fragment, but a wrong answer on a GPU too: judged there
    _judged("stores", (lambda: "wrong sums", ("global-memory race", "hist[b] = bins[b]"), False))
    with pytest.raises(AssertionError, match="passed but is wrong"):
        _judged("stores", (lambda: None, ("global-memory race",), False))
    with pytest.raises(AssertionError):
        _judged("right", (lambda: "wrong", None))
