"""The speed test's pieces that a notebook runs: the bar (the instructor's recalibrated one when set),
the CPU baselines at the speed size, the table printed under a speed cell, and ``check_speed``
(the judge's own speed test, run in the learner's process on a GPU). The judge's side of the test
is :func:`autograder.grading.judge._judge_speed`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from autograder.machine import device, timing
from autograder.core.spec import SpeedBar
from autograder.machine.timing import SPEED_BARS_ENV, Stats


def speed_bar(problem):
    """The problem's bar, or the instructor's recalibrated one from ``$AAG_SPEED_BARS``."""
    path = os.environ.get(SPEED_BARS_ENV)
    if path and os.path.exists(path):
        bars = json.loads(Path(path).read_text())
        if problem.name in bars:
            return SpeedBar(**bars[problem.name])
    return problem.speed


def cpu_baselines(problem, n, only: tuple[str, ...] | None = None) -> list[Stats]:
    """The CPU baselines (``only`` these keys) at size n, cached per machine: serial ones are
    slow. Baselines marked ``at_speed_size=False`` are left out."""
    made: dict = {}

    def args() -> dict:   # made only when a baseline is not cached yet (seconds at 2^28)
        if not made:
            made.update(problem.speed_inputs(np.random.default_rng(1), n))
            made.update({name: np.empty(shape, dt) for name, (shape, dt) in problem.outputs(n).items()})
        return made

    results = []
    for key, baseline in problem.baselines.items():
        if not baseline.at_speed_size or (only is not None and key not in only):
            continue
        results.append(timing.time_cpu(baseline.label, lambda b=baseline: b.run(**args()),
                                repeats=5, nbytes=problem.bytes_moved(n),
                                cache_key=f"{problem.name}|{key}|{n}"))
    return results


def speed_table(problem, details: dict) -> str:
    """The learner's speed test as a table: yours, the course reference, the copy of the same
    bytes, the CPU baselines; time, GB/s (and GFLOP/s where the work is arithmetic)."""
    nbytes, flops = details["bytes"], details["flops"]
    compute = bool(flops) and flops / max(nbytes, 1) >= 4
    head = f"  {'':34s} {'time':>11s} {'GB/s':>8s}" + (f" {'GFLOP/s':>9s}" if compute else "")
    lines = [f"Speed test: {problem.name} ({device.current().label})", head + "  vs yours"]
    yours = details["median_ms"]
    copy_label = details["copy_ceiling_label"].replace("copy ceiling", "copy of the same bytes")
    rows = [("yours", yours, True), ("course reference", details["reference_ms"], True),
            (copy_label, details["copy_ceiling_ms"], False)]
    rows += [(f"CPU: {label}", ms, True) for label, ms in details["cpu_baselines"].items()]
    for label, ms, does_the_work in rows:
        line = f"  {label[:34]:34s} {ms:8.3f} ms {nbytes / ms / 1e6:8.1f}"
        if compute:
            line += f" {flops / ms / 1e6:9.0f}" if does_the_work else f" {'–':>9s}"
        lines.append(line + f"  {ms / yours:7.2f}×")
    lines.append(f"  you reach {details['copy_ceiling_ms'] / yours:.0%} of the copy bandwidth "
                 f"for the bytes this problem must move ({nbytes / 1e6:,.0f} MB)")
    if compute:
        from autograder.machine.facts import peak_fp32_flops
        lines.append(f"  and {flops / (yours * 1e-3) / peak_fp32_flops():.0%} of this GPU's "
                     "FP32 peak (without tensor cores)")
    return "\n".join(lines)
