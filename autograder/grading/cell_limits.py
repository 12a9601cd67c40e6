"""How long each cell of a submission may run when it is graded: a multiple of what the chapter's
own solution needs, on the machine that grades.

One limit for every cell (nbgrader's ``Execute.timeout``, 300 s) is either far too long for a
chapter whose cells take a second (a hang costs five minutes of a grader) or too short for one
whose cells take a minute. So the first time a machine grades an assignment, it runs the
assignment's source notebook (the instructor's version, solutions in) once, in the same sandboxed
kernel, and keeps the processor seconds of each cell (in ``~/.cache/all-about-gpus``, by machine,
backend and the notebook's bytes). A submission's cell may then run ``MARGIN`` times its
solution's time, at least ``FLOOR`` seconds, at most ``Execute.timeout``; a cell the learner added
gets what the slowest solution cell gets. A learner's kernel that is ten times slower than the
solution's still runs; one that never ends is stopped in well under a minute on most chapters.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

MARGIN = 10.0          # a cell may take this many times its solution's processor time
FLOOR = 20.0           # and at least this many seconds


def cache_key(source: bytes) -> str:
    from autograder.machine import device, timing
    return (f"{timing.machine_key()}|{device.current().name}|"
            f"{hashlib.sha256(source).hexdigest()[:16]}")


def solution_seconds(source_path: Path, measure: Callable[[], dict[str, float]]) -> dict[str, float]:
    """Processor seconds per cell id of the solution notebook at ``source_path`` on this machine:
    kept from an earlier run, else ``measure()``-d now and kept."""
    from autograder.machine import timing
    return timing.kept("cell-seconds.json", cache_key(Path(source_path).read_bytes()),
                       lambda: {cell: round(float(s), 3) for cell, s in measure().items()})


def limit(seconds: dict[str, float], cell_id: str | None, ceiling: float,
          margin: float = MARGIN, floor: float = FLOOR) -> float:
    """The processor seconds a submission's cell may take (``ceiling``: Execute.timeout)."""
    if cell_id in seconds:
        base = seconds[cell_id]
    else:                       # a cell the learner added: as long as the slowest solution cell
        base = max(seconds.values(), default=ceiling / margin)
    return float(min(ceiling, max(floor, margin * base)))
