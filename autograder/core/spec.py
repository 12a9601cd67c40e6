"""What an exercise is made of, as data: its cases (:class:`Case`), sizes per backend
(:class:`Sizes`), speed bar (:class:`SpeedBar`) and CPU baselines (:class:`Baseline`); the seeds of
its cases; and the rules every grader shares (the environment variables, what a speed cell is
worth without a GPU). No Numba here: the judge's process reads these without a GPU library."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

HIDDEN_SEED_ENV = "AAG_SECRET_SEED"      # the instructor's secret, mixed into every hidden case
SPEED_WITHOUT_GPU_ENV = "AAG_SPEED_WITHOUT_GPU"   # a speed cell's worth without a GPU, see below
# What a speed cell is worth where there is no GPU to time on: "zero" (fails), "full" (passes when
# the correctness checks pass), "defer" (fails now, marked for `aag grade-all ASSIGNMENT
# --speed-only` on a GPU machine, which grades those submissions again) or "not-applicable" (left
# out: nothing is timed, nothing at stake).
SPEED_WITHOUT_GPU = ("zero", "full", "defer", "not-applicable")
# The default of each place that grades a speed cell (an instructor's autograde can be configured
# with c.JudgeSubmission.speed_without_gpu; the environment variable overrides every place).
SPEED_WITHOUT_GPU_DEFAULT = {"autograde": "zero", "self-grade": "not-applicable",
                             "notebook": "not-applicable"}
CHECK_TIMEOUT_ENV = "AAG_CHECK_TIMEOUT"  # seconds a single case may run before it counts as a hang
# "judge" in the processes that run a learner's notebook at grading time (nbgrader's kernel, the
# judge's student processes): the notebook's own checks defer to the judge, and its measuring
# cells skip their timing (measurements earn no points; the grader times only the speed cells).
GRADING_ENV = "AAG_GRADING"


def being_graded() -> bool:
    """Is this process running a learner's notebook for the grader?"""
    import os
    return os.environ.get(GRADING_ENV) == "judge"


def skipped_while_graded(what: str):
    """Decorator for a picture that earns no points (a kernel's accesses, its compiled code): while
    the grader runs the notebook it prints one line and returns None instead of taking seconds of
    the grader's time per submission."""
    import functools

    def wrap(fn):
        @functools.wraps(fn)
        def picture(*args, **kwargs):
            if being_graded():
                print(f"({what}: not drawn while the notebook is graded.)")
                return None
            return fn(*args, **kwargs)
        return picture
    return wrap


def speed_without_gpu(where: str, configured: str | None = None) -> str:
    """The one rule for a speed cell graded without a GPU: ``AAG_SPEED_WITHOUT_GPU`` if set, else
    ``configured`` (an instructor's setting), else the default of ``where`` ("autograde": zero;
    "self-grade", ``aag grade``: not applicable, out of the total; "notebook", the learner running
    the cell: not applicable)."""
    value = (os.environ.get(SPEED_WITHOUT_GPU_ENV) or configured
             or SPEED_WITHOUT_GPU_DEFAULT[where]).strip().lower()
    if value not in SPEED_WITHOUT_GPU:
        raise ValueError(f"{SPEED_WITHOUT_GPU_ENV} (or the setting) is {value!r}; it must be one "
                         f"of {', '.join(SPEED_WITHOUT_GPU)}")
    return value


def what_speed_cells_get(worth: str, assignment: str) -> str:
    """What a grader without a GPU does with an autograded speed cell, in words, for ``worth``
    (one of SPEED_WITHOUT_GPU but "not-applicable", which only a self-grade uses)."""
    return {"zero": "score zero",
            "full": "get full marks where the exercise's correctness checks pass",
            "defer": f"score zero until `aag grade-all {assignment} --speed-only` grades them on "
                     "a GPU machine"}[worth]


@dataclass
class Case:
    """One input set: the arrays, the size, and (for kernel problems) the launch shape.

    For 1-D problems ``size``, ``blocks`` and ``threads`` are ints. A multi-dimensional problem
    uses tuples: ``size`` is its shape (an image's (height, width), a matmul's (M, K, N)), and
    ``blocks``/``threads`` are CUDA's (x, y) grid and block dimensions."""

    size: int | tuple[int, ...]
    inputs: dict[str, Any]
    blocks: int | tuple[int, ...] = 0
    threads: int | tuple[int, ...] = 0
    label: str = ""     # how the problem names the size ("a 37 × 53 image"); "n = size" if empty
    # What the judge computed for this case once (Problem.reference_values), freed once judged.
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def describe(self) -> str:
        text = self.label or f"n = {self.size}"
        if isinstance(self.threads, tuple):
            axes = " × ".join("xyz"[:len(self.threads)])
            text += (f", launched as a {dims_text(self.blocks)} grid of blocks of "
                     f"{dims_text(self.threads)} threads ({axes})")
        elif self.threads:
            text += f", launched as {self.blocks} block{'s' * (self.blocks != 1)} × {self.threads} threads"
        return text

    @property
    def thread_count(self) -> int:
        if not self.threads:
            return int(np.prod(self.size))
        return int(np.prod(self.blocks)) * int(np.prod(self.threads))


def dims_text(v) -> str:
    return " × ".join(str(int(d)) for d in v)


def as_size(value):
    """A size or launch shape as it came back through JSON (a list) -> the tuple it was."""
    return tuple(int(v) for v in value) if isinstance(value, (list, tuple)) else value


@dataclass
class Sizes:
    """Sizes per backend: fixed edge sizes, plus random ones drawn from the case's seed."""

    visible: tuple[int, ...]
    hidden: tuple[int, ...]
    hidden_random: tuple[int, int, int] = (0, 0, 0)   # (count, low, high); per side for shapes
    speed: int | tuple[int, ...] = 0    # the speed test's size (GPU only): elements, or a shape


@dataclass
class SpeedBar:
    """Portable speed bar: a fraction of the course reference's speed timed in the same run,
    plus a minimum speedup over a named CPU baseline measured on the same machine."""

    min_fraction_of_reference: float
    baseline: str
    min_speedup: float


@dataclass
class Baseline:
    label: str          # honest name, e.g. "NumPy np.add (1 core)"
    run: Callable[..., None]   # run(**host_inputs, **host_outputs)
    at_speed_size: bool = True  # False: too slow to time at the speed test's size (minutes)


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from the parts (a problem's name, the instructor's secret, a purpose)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")
