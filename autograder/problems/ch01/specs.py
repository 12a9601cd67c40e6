"""Chapter 1's graded exercises: Amdahl's law, thread indices, SAXPY."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.grading.problem import Problem, Sizes
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.inputs import random_floats

U64 = 2.0 ** -53


# ---- 1.1 Amdahl's law -------------------------------------------------------------------------

def _amdahl_inputs(rng, n):
    p = rng.uniform(0, 1, n)
    s = 10.0 ** rng.uniform(0, 3, n)
    # The edges a formula must get right: nothing parallel, everything parallel, no speedup.
    p[:3], s[:3] = [0.0, 1.0, 0.5], [10.0, 10.0, 1.0]
    return {"parallel_fraction": p, "speedup": s}


def _amdahl_spec(parallel_fraction, speedup):
    return {"overall": 1.0 / ((1.0 - parallel_fraction) + parallel_fraction / speedup)}


def _amdahl_tolerance(inputs, expected):
    # Any algebraically equal formula is right. The denominator 1/overall carries an absolute
    # error of a few float64 roundings (even where 1 - p*(1 - 1/s) cancels), so the relative
    # error of the result is at most ~8u / denominator = 8u * overall.
    r = expected["overall"]
    return {"overall": 64 * U64 * (r + r * r)}


amdahl = formula_problem(
    "amdahl", title="Amdahl's law: the speedup of a whole program",
    function="amdahl_speedup", args=(("parallel_fraction", float), ("speedup", float)),
    results=("overall",), spec=_amdahl_spec, make_inputs=_amdahl_inputs,
    tolerance=_amdahl_tolerance, sizes=Sizes(visible=(8,), hidden=(200,)),
)


# ---- 1.2 Who am I: block, thread and global index ----------------------------------------------

def _ids_spec(n, blocks, threads):
    i = np.arange(n)
    return {"block": (i // threads).astype(np.float64), "thread": (i % threads).astype(np.float64),
            "index": i.astype(np.float64)}


def _ids_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](outputs["block"], outputs["thread"], outputs["index"])


thread_ids = Problem(
    "thread_ids", title="Which block, which thread, which element",
    spec=_ids_spec, make_inputs=lambda rng, n: {"n": n},
    outputs=lambda n: {k: ((n,), np.int32) for k in ("block", "thread", "index")},
    tolerance=lambda inputs, exp: {k: np.zeros(1) for k in exp},
    launch=_ids_launch,
    block_sizes=(32, 64, 96, 128, 160, 256), visible_block_size=128,
    cpu_sizes=Sizes(visible=(1025, 127, 1), hidden=(33, 1000, 4103), hidden_random=(2, 200, 3000)),
    gpu_sizes=Sizes(visible=(100_003, 1025, 127, 1), hidden=(33, 1000, 16_777_219),
                    hidden_random=(3, 10_000, 3_000_000)),
)


# ---- 1.3 SAXPY: a map kernel on any length ----------------------------------------------------

def _saxpy_inputs(rng, n):
    return {"a": np.float32(rng.uniform(-4, 4)), "x": random_floats(rng, n),
            "y": random_floats(rng, n)}


def _saxpy_spec(a, x, y, **launch):
    return {"out": float(a) * x + y}


def _saxpy_tolerance(inputs, expected):
    # fl(fl(a*x) + y) is within u|ax| + u|ax + y| (1 + u) of a*x + y; an FMA rounds once.
    # gamma_2 (|a x| + |y|) covers both, plus the smallest normal for results near zero.
    a = np.float64(inputs["a"])
    x, y = inputs["x"].astype(np.float64), inputs["y"].astype(np.float64)
    return {"out": gamma(2) * (np.abs(a * x) + np.abs(y)) + TINY32}


def _saxpy_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["a"], inputs["x"], inputs["y"], outputs["out"])


saxpy = Problem(
    "saxpy", title="SAXPY: out = a·x + y for any length",
    spec=_saxpy_spec, make_inputs=_saxpy_inputs,
    outputs=lambda n: {"out": ((n,), np.float32)},
    tolerance=_saxpy_tolerance, launch=_saxpy_launch,
    block_sizes=(32, 64, 128, 256, 512), visible_block_size=128,
    cpu_sizes=Sizes(visible=(1025, 1023, 1), hidden=(31, 4101), hidden_random=(3, 500, 4000)),
    gpu_sizes=Sizes(visible=(1_000_003, 1025, 1023, 1), hidden=(31, 16_777_219),
                    hidden_random=(3, 100_000, 20_000_000)),
    bytes_moved=lambda n: 12 * n, flops=lambda n: 2 * n,
)
