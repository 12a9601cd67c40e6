"""Measured facts about the course's reference GPU (an NVIDIA H200) that the chapters quote.

One place for each figure: its value and unit, what was measured and how, and the run it came from
(device, date, versions), all read from ``device_facts.json`` beside this module. Every value is
computed from a measurement already recorded in the repository (the JSON names the file, the
fields and the formula; ``tests/test_device_facts.py`` recomputes each one and checks that the
chapters' text quotes the same figure wherever it names the fact).

A notebook's code cell quotes a fact with ``device_facts.quote("copy_ceiling")`` ("4,269 GB/s");
markdown cannot compute, so it writes the figure out and the test keeps it in step.
"""

from __future__ import annotations

import json
from importlib import resources

_DATA = json.loads(resources.files(__package__).joinpath("device_facts.json").read_text())
FACTS: dict[str, dict] = _DATA["facts"]
RUNS: dict[str, dict] = _DATA["runs"]


def fact(name: str) -> dict:
    """Everything recorded about one fact: value, unit, digits, measured, how, run, source."""
    return FACTS[name]


def value(name: str) -> float:
    """The fact's value, in its unit."""
    return FACTS[name]["value"]


def unit(name: str) -> str:
    return FACTS[name]["unit"]


def run(name: str) -> dict:
    """The run a fact comes from: its file, date, command, device, host and versions."""
    return RUNS[FACTS[name]["run"]]


def quote(name: str) -> str:
    """The fact as the chapters write it: '4,269 GB/s', '32 cores', '0.880 ms'."""
    f = FACTS[name]
    return f"{f['value']:,.{f['digits']}f} {f['unit']}"


def source_line(name: str) -> str:
    """Where a fact comes from, in one line: 'NVIDIA H200 ..., 2026-11-29 (docs/bench-h200.json)'."""
    r = run(name)
    return f"{r['device']}, {r['date']} ({r['file']})"
