"""A measuring cell's run on the course's GPU, kept for learners without one (chapters 25-27).

``write(rows, folder, chart, title)`` writes ``<folder>/h200_<chart>.json`` with the device and
the package versions (``scripts/gpu-measure.py`` calls it on the H200, and the file is copied into
the chapter's folder); ``read(chart)`` returns that file's contents from the chapter's folder, or
None while it has not been recorded, when a cell prints :data:`NOT_RECORDED` instead of a chart.
"""

from __future__ import annotations

import json
from pathlib import Path

NOT_RECORDED = ("The course's H200 run of this cell is not recorded yet: run the cell on a GPU "
                "to see your own numbers.")


def write(rows: list[dict], folder: str | Path, chart: str, title: str) -> Path:
    from autograder.machine.facts import gpu_facts, versions
    Path(folder).mkdir(parents=True, exist_ok=True)
    path = Path(folder) / f"h200_{chart}.json"
    path.write_text(json.dumps({"device": gpu_facts()["name"], "versions": versions(),
                                "title": title, "rows": rows}, indent=1) + "\n")
    return path


def read(chart: str) -> dict | None:
    from autograder.problems import recorded_file
    path = recorded_file(f"h200_{chart}")
    return json.loads(path.read_text()) if path is not None else None
