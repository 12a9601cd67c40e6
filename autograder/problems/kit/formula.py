"""Exercises answered with a formula in plain Python (``on_device=False``): a function of a few
numbers that predicts a time, a traffic, an occupancy. Graded like a kernel: random seeded
inputs, a float64 spec, a tolerance, hidden cases."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from autograder.grading.problem import Problem, Sizes


def formula_problem(name: str, *, title: str, function: str, args: tuple[tuple[str, type], ...],
                    results: tuple[str, ...], spec: Callable[..., dict[str, np.ndarray]],
                    make_inputs: Callable[[np.random.Generator, int], dict[str, Any]],
                    tolerance: Callable[[dict, dict], dict], sizes: Sizes,
                    value_hint: str = "", size_label: Callable[[Any], str] | None = None) -> Problem:
    """A :class:`Problem` for ``function(arg, ...)`` returning one number (one result) or a
    tuple of ``len(results)`` numbers. ``args`` names the inputs in call order with the type each
    is passed as (``int`` or ``float``); ``sizes`` are the case counts (the same on every
    machine, since nothing runs on the device); ``size_label`` names a case's size in verdicts
    (default: "8 calls of function(arg, ...)", not "n = 8")."""
    if size_label is None:
        names = ", ".join(arg for arg, _ in args)
        size_label = lambda count: f"{count} call{'s' * (count != 1)} of {function}({names})"  # noqa: E731

    def call(fn, inputs, outputs, case):
        for i in range(case.size):
            got = fn(*(kind(inputs[arg][i]) for arg, kind in args))
            if len(results) == 1:
                outputs[results[0]][i] = got
                continue
            try:
                values = [float(v) for v in got]
                if len(values) != len(results):
                    raise ValueError
            except (TypeError, ValueError):
                raise TypeError(f"{function}(...) must return {len(results)} numbers, "
                                f"({', '.join(results)}); it returned {got!r}") from None
            for key, value in zip(results, values):
                outputs[key][i] = value

    problem = Problem(
        name, title=title, spec=spec, make_inputs=make_inputs,
        outputs=lambda count: {key: ((count,), np.float64) for key in results},
        tolerance=tolerance, launch=call, on_device=False, cpu_sizes=sizes, gpu_sizes=sizes,
        value_hint=value_hint, size_label=size_label)
    # The judge's student process watches the call for the course's own code (the spec that
    # knows the answer ships in this package): see grading.runner.watch_course_code.
    problem.watch_course_code = True
    return problem
