"""Do the chapters quote one set of measured device facts, and is each fact a recorded measurement?

``autograder/data/device_facts.json`` holds each figure once (the copy ceiling, the host's cores,
the atomics' rates, the pageable copy's rate...) with the recorded file it is computed from. These
tests recompute every fact from that file, and read every chapter source for the phrases in which
it names a fact: a chapter quoting another run's figure, or a rounded figure that is not the
recorded one, fails here.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from autograder.data import device_facts

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((REPO / "source").glob("ch*/ch*.py"))
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
SCALE = {("GB/s", "TB/s"): 1e-3, ("GB/s", "GB/s"): 1.0, ("ms", "ms"): 1.0, ("cores", None): 1.0,
         ("updates per second", None): 1.0, ("GB/s", None): 1.0, ("ms", None): 1.0}


def _field(data, path: str):
    """A field of a recorded JSON file: 'a/b/0/c', or 'list/key=value/c' to pick a list's entry."""
    for part in path.split("/"):
        if isinstance(data, list):
            if "=" in part:
                key, want = part.split("=", 1)
                matches = [item for item in data if str(item.get(key)) == want]
                assert len(matches) == 1, f"{path}: {len(matches)} entries with {part}"
                data = matches[0]
            else:
                data = data[int(part)]
        else:
            data = data[part]
    return data


def _recomputed(name: str) -> float:
    source = device_facts.fact(name)["source"]
    recorded = json.loads((REPO / source["file"]).read_text())
    inputs = {key: _field(recorded, path) for key, path in source["inputs"].items()}
    return eval(source["formula"], {"__builtins__": {}}, inputs)   # formulas of this repo's JSON


def _text(path_or_text) -> str:
    """A source's words as a learner reads them: comment markers gone, lines joined, a string
    that a print call continues on the next line joined to its continuation."""
    raw = path_or_text.read_text() if isinstance(path_or_text, Path) else path_or_text
    lines = [re.sub(r"^\s*#\s?", "", line).strip() for line in raw.splitlines()]
    text = " ".join(lines)
    text = re.sub(r'"\s+f?"', "", text)
    return re.sub(r"\s+", " ", text)


def _quotes(text: str):
    """(fact, quoted text, quoted value, the fact's value in the quoted unit, allowed error)."""
    for name, f in device_facts.FACTS.items():
        for pattern in f["quoted_as"]:
            for m in re.finditer(pattern, text):
                number = m.group("n").replace(",", "").rstrip(".")
                decimals = len(number.split(".")[1]) if "." in number else 0
                quoted = float(number)
                groups = m.groupdict()
                want = f["value"] * SCALE[(f["unit"], groups.get("u"))] if groups.get("u") \
                    else f["value"]
                if groups.get("e"):
                    want /= 10 ** int(groups["e"].translate(SUPERSCRIPT))
                yield name, m.group(0), quoted, want, 0.5 * 10 ** -decimals


def _wrong(text: str) -> list[str]:
    return [f"{name}: '{snippet}' quotes {quoted:g}, the recorded figure is {want:.4g} "
            f"({device_facts.source_line(name)})"
            for name, snippet, quoted, want, allowed in _quotes(text)
            if abs(quoted - want) > allowed * (1 + 1e-9)]


@pytest.mark.parametrize("name", sorted(device_facts.FACTS))
def test_each_fact_is_computed_from_the_measurement_it_names(name):
    f = device_facts.fact(name)
    for key in ("value", "unit", "digits", "measured", "how", "run", "source", "quoted_as"):
        assert key in f, f"{name} lacks {key!r}"
    assert math.isclose(_recomputed(name), f["value"], rel_tol=1e-12), name
    run = device_facts.run(name)
    assert (REPO / run["file"]).is_file() and run["file"] == f["source"]["file"]
    for key in ("date", "command", "device", "host", "versions"):
        assert run.get(key), f"run {f['run']} lacks {key!r}"


def test_the_main_run_is_the_recorded_one():
    """The facts' main run says what its file records: device, SMs, host cores, versions."""
    run = device_facts.RUNS["h200-2026-11-29"]
    recorded = json.loads((REPO / run["file"]).read_text())
    assert recorded["device"]["name"] in run["device"]
    assert f"{recorded['device']['sms']} SMs" in run["device"]
    assert f"{recorded['cpu_cores']} cores" in run["host"]
    for package, version in recorded["versions"].items():
        assert f"{package} {version}" in run["versions"] or f"Python {version}" in run["versions"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.parent.name)
def test_the_chapter_quotes_the_recorded_figures(path):
    wrong = _wrong(_text(path))
    assert not wrong, f"{path.relative_to(REPO)}:\n" + "\n".join(wrong)


def test_the_chapters_do_quote_the_facts():
    """The phrases are found: each of these facts is named somewhere, so the check is not empty."""
    named = {name for path in CHAPTERS for name, *_ in _quotes(_text(path))}
    for name in ("copy_ceiling", "host_cores", "same_address_atomics", "distinct_address_atomics",
                 "pageable_copy_with_allocation"):
        assert name in named, f"no chapter names {name} in a phrase of its quoted_as"


@pytest.mark.parametrize("text", [
    "the copy ceiling 4214 GB/s.",
    "On the course's H200 the fastest copy (CuPy's) moved about 4,170 GB/s, so",
    "# took 2.96 ms: 2% of the\n#  3,900 GB/s of a device-to-device copy of the same bytes",
    "(one NVIDIA H200 and a 16-core host CPU)",
    'print("a copy reached "\n      "4,126 GB/s")',
    "the copy ceiling (4.1 TB/s)",
    "one address much faster, at least 0.9 · 2²⁸ / 5.6 ms ≈ 9 × 10¹⁰ per second",
])
def test_a_figure_from_another_run_is_caught(text):
    assert _wrong(_text(text))


@pytest.mark.parametrize("text", [
    "the copy ceiling (4,269 GB/s)", "4.27 TB/s, the copy ceiling", "a 32-core host",
    "one address, at least 4 × 10¹⁰ updates per second",
])
def test_the_recorded_figure_passes(text):
    assert list(_quotes(_text(text))) and not _wrong(_text(text))


def test_code_cells_quote_the_module():
    assert device_facts.quote("copy_ceiling") == "4,269 GB/s"
    assert device_facts.quote("host_cores") == "32 cores"


def test_chapters_9_and_10_give_one_global_address_the_same_rate():
    """Chapter 10's atomic_rate is chapter 9's model of one global address, with its figure."""
    from autograder.problems.ch09 import specs as ch09
    from autograder.problems.ch10 import specs as ch10
    assert ch10.ATOMIC_RATE == ch09.GLOBAL_ADDRESS_RATE
    source = (REPO / "source/ch10_reduction/ch10_reduction.py").read_text()
    assert f"atomic_rate={ch09.GLOBAL_ADDRESS_RATE:.0e}".replace("e+0", "e") in source
