"""The course's own reference kernels (timed beside every speed test, and by `aag bench`) and the
extra kernels `aag bench` lists must be right: a wrong reference would make every speed bar and
every benchmark number meaningless. Each passes its exercise's visible cases (CPU mode: the
smallest ones, so the simulator stays quick)."""

from __future__ import annotations

import numpy as np
import pytest

import autograder as ag
from autograder.problems import ALL, CHAPTERS

KERNELS = [(p.name, "course reference", p.reference) for p in ALL.values() if p.reference]
KERNELS += [(name, label, factory) for module in CHAPTERS
            for name, variants in getattr(module, "BENCH_VARIANTS", {}).items()
            for label, factory in variants.items()]


@pytest.mark.parametrize("name,label,factory", KERNELS, ids=[f"{n}: {l}" for n, l, _ in KERNELS])
def test_reference_and_bench_kernels_pass_their_exercise(name, label, factory):
    problem = ALL[name]
    if problem.kernel_language == "triton":
        from autograder.machine import triton_bridge
        if triton_bridge.unavailable_reason():
            pytest.skip(triton_bridge.unavailable_reason())
    cases = problem.cases()
    if not ag.backend.is_gpu:
        cases = sorted(cases, key=lambda c: c.thread_count)[:2]
    verdict = problem.verdict(factory(), cases)
    assert verdict.passed, verdict


def test_every_speed_test_has_what_it_needs():
    """A problem with a speed bar needs a reference, a speed size, bytes (and a baseline that
    the bar names, which is timed at that size); a multi-dimensional or non-elementwise one also
    needs a sample spec, or the judge computes the whole float64 spec after every timed call."""
    for p in ALL.values():
        if not p.speed:
            continue
        assert p.reference and p.gpu_sizes.speed and p.bytes_moved, p.name
        assert p.speed.baseline in p.baselines and p.baselines[p.speed.baseline].at_speed_size, p.name
        if not p.elementwise:
            out = sum(int(np.prod(shape)) for shape, _ in p.outputs(p.gpu_sizes.speed).values())
            assert p.sample_spec or out <= 1 << 16, p.name
