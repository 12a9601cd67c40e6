"""Is the submission bank honest? Every exploit really beats the naive check it names (no
strawmen), the naive allclose harness passes correct code, plain bugs fail the in-notebook check.

Each run executes SETUP + the entry + a naive check in a fresh IPython shell in a subprocess (see
tests/bank/naive.py), in CPU mode here; the GPU-only entries run on an NVIDIA GPU only.

CI time: every entry's *grade* is asserted by tests/test_bank.py (real nbgrader autograde, judge
and sandbox: ok entries full marks, wrong and exploit entries none). Here only what that cannot
show runs for every entry (each exploit beats its naive check); the harness soundness (an ok entry
passes allclose) and the in-notebook check failing a bug with a traceback run for one entry per
exercise, which is what they are about.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

import autograder as ag

import bank
from bank.naive import COURSE_SPEED, run_naive_detail

ENTRIES = bank.entries()
CPU_ENTRIES = [e for e in ENTRIES if not e.gpu_only]
EXPLOITS = [e for e in CPU_ENTRIES if e.kind == "exploit"]
WRONG_BEATING = [e for e in CPU_ENTRIES if e.kind == "wrong" and e.naive != "none"]
OKS = [e for e in CPU_ENTRIES if e.kind == "ok"]
WRONGS = [e for e in CPU_ENTRIES if e.kind == "wrong"]


def _first_per_exercise(entries, exercises=None):
    """One entry per exercise (the first by name): enough to show a harness or check is sound."""
    chosen = {}
    for e in sorted(entries, key=lambda e: e.id):
        if exercises is None or e.exercise in exercises:
            chosen.setdefault(e.exercise, e)
    return list(chosen.values())


# An ok entry through the allclose harness, for the exercises where something claims to beat it.
OKS_ALLCLOSE = _first_per_exercise(OKS, {e.exercise for e in CPU_ENTRIES if e.naive == "allclose"})
WRONGS_IN_NOTEBOOK = _first_per_exercise(WRONGS)
GPU_ONLY = [e for e in ENTRIES if e.gpu_only]


def _ids(entries):
    return [e.id for e in entries]


# ---- a summary line per category (printed at the end of the module) ----------------------------

_results: dict[str, list[tuple[str, bool, str]]] = defaultdict(list)


def _record(category: str, entry, ok: bool, detail: str) -> None:
    _results[category].append((entry.id, ok, detail))
    print(f"[{category}] {'ok ' if ok else 'BAD'} {detail}")


@pytest.fixture(scope="module", autouse=True)
def _summary(request):
    yield
    lines = []
    for category, rows in sorted(_results.items()):
        good = sum(ok for _, ok, _ in rows)
        bad = [name for name, ok, _ in rows if not ok]
        lines.append(f"bank summary: {category}: {good}/{len(rows)} as expected"
                     + (f"; NOT: {', '.join(bad)}" if bad else ""))
    for line in lines:
        print(line)    # captured; shown with -rP, or on the terminal below when not under xdist
    plugins = request.config.pluginmanager
    reporter, capman = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if lines and reporter is not None and capman is not None and not hasattr(request.config,
                                                                            "workerinput"):
        with capman.global_and_fixture_disabled():
            reporter.write_line("")
            for line in lines:
                reporter.write_line(line)


# ---- the bank itself ---------------------------------------------------------------------------

def test_bank_has_required_counts():
    """Are there enough entries of each kind, spread over the exercises, with the required ones?"""
    counts = Counter((e.kind, e.exercise) for e in CPU_ENTRIES)
    bad_cpu = [e for e in CPU_ENTRIES if e.kind in ("wrong", "exploit")]
    for kind in bank.KINDS:
        per = {ex: counts[(kind, ex)] for ex in bank.EXERCISES}
        print(f"bank: {kind:8s} {sum(per.values()):3d} in CPU mode  " +
              "  ".join(f"{ex} {k}" for ex, k in per.items()))
    print(f"bank: gpu-only {len(GPU_ONLY)}: {', '.join(_ids(GPU_ONLY))}")
    assert len(bad_cpu) >= 22
    assert len(EXPLOITS) >= 10
    assert len(OKS) >= 10
    assert all(counts[(k, ex)] >= 1 for k in bank.KINDS for ex in bank.EXERCISES), counts
    # Of chapters 1-2, most of the wrong and exploit entries are for the two chapter-2 exercises
    # (later chapters add a few each, for their own exercises).
    early = [e for e in bad_cpu if bank.EXERCISES[e.exercise]["module"] in ("ch01", "ch02")]
    ch02 = [e for e in early if e.exercise in ("vector_add", "grid_stride")]
    assert len(ch02) > len(early) / 2
    assert len([e for e in GPU_ONLY if e.kind == "exploit" and e.exercise == "grid_stride"]) >= 4
    assert {e.naive for e in EXPLOITS} == {"course", "allclose"}


def test_bank_headers_are_well_formed():
    """Does every file parse, with a unique id, a known exercise and a consistent header?"""
    assert len({e.id for e in ENTRIES}) == len(ENTRIES)
    for e in ENTRIES:
        assert e.exercise in bank.EXERCISES
        assert e.note and e.code.startswith("# bank: ")
        assert (e.kind != "exploit") or e.naive in ("course", "allclose")
        assert (e.kind != "ok") or e.naive == "none"
        # The cell defines the name the test cell calls.
        assert bank.EXERCISES[e.exercise]["func"] in e.code, e.id


def test_bank_rejects_malformed_headers(tmp_path):
    """Does the parser fail loudly on a missing or wrong header?"""
    folder = tmp_path / "vector_add"
    folder.mkdir()
    cases = {
        "exploit_no_naive.py": "# bank: x\n# naive: none\npass\n",
        "ok_no_header.py": "pass\n",
        "ok_bad_naive.py": "# bank: x\n# naive: sometimes\npass\n",
        "wrong_gpu.py": "# bank: x\n# naive: none\n# gpu-only: maybe\npass\n",
        "bogus_kind.py": "# bank: x\n# naive: none\npass\n",
    }
    for name, text in cases.items():
        (folder / name).write_text(text)
        with pytest.raises(bank.MalformedEntry):
            bank.parse(folder / name)


def test_grading_cells_are_the_chapters():
    """Are the test cells the bank is graded with the chapters' real ones?"""
    for exercise, spec in bank.EXERCISES.items():
        cell = bank.grading_cell(exercise)
        assert f"{spec['problem']}.check({spec['func']})" in cell
        assert f"{spec['problem']}.check_hidden({spec['func']})" in cell
    assert "check_speed(vector_add_grid_stride)" in bank.speed_cell("grid_stride")


# ---- the naive checks, run for real ------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("entry", EXPLOITS + WRONG_BEATING, ids=_ids(EXPLOITS + WRONG_BEATING))
def test_entry_beats_its_naive_check(entry):
    """Does the exploit (or bug) really score on the naive check it names? (No strawmen.)"""
    result = run_naive_detail(entry)
    _record(f"{entry.kind} beats naive {entry.naive}", entry, result.scored, str(result))
    assert result.scored, f"{result}\n{result.output}\n{result.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize("entry", OKS_ALLCLOSE, ids=_ids(OKS_ALLCLOSE))
def test_ok_entry_passes_allclose_check(entry):
    """Does a correct entry pass the naive allclose harness too (the harness is sound)?"""
    result = run_naive_detail(entry, "allclose")
    _record("ok passes allclose", entry, result.scored, str(result))
    assert result.scored, f"{result}\n{result.output}\n{result.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize("entry", WRONGS_IN_NOTEBOOK, ids=_ids(WRONGS_IN_NOTEBOOK))
def test_wrong_entry_fails_course_check(entry):
    """Does a plain bug fail the course's own in-notebook check, because the check raised (with
    a traceback the learner sees)? Every wrong entry's zero grade is tests/test_bank.py's."""
    result = run_naive_detail(entry, "course")
    expected = result.solution_ok and not result.scored and not result.check_success
    _record("wrong fails course", entry, expected, str(result))
    assert result.solution_ok, f"the entry's own cell failed:\n{result.output}"
    assert not result.scored, f"{result}\n{result.output}"
    assert not result.check_success and result.traceback_shown, result.output


# ---- GPU-only entries: correct, but beating a naive timer --------------------------------------

@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("entry", GPU_ONLY, ids=_ids(GPU_ONLY))
def test_gpu_only_entry_is_correct_and_beats_naive_speed(entry):
    """On a GPU: does the entry pass the course's correctness check (so only speed grading can
    catch it) and beat the naive check it names (allclose + one timed launch)?"""
    assert ag.backend.name == "cuda"
    course = run_naive_detail(entry, "course")
    _record("gpu-only correct", entry, course.scored, str(course))
    assert course.scored, f"{course}\n{course.output}\n{course.stderr}"
    naive = run_naive_detail(entry)
    _record(f"gpu-only beats naive {entry.naive}", entry, naive.scored, str(naive))
    assert naive.scored, f"{naive}\n{naive.output}\n{naive.stderr}"
    speed = run_naive_detail(entry, COURSE_SPEED)
    # Reported, not asserted: whether the course's own speed cell (in-process) is fooled too.
    _record("gpu-only vs course speed cell (informational)", entry, True,
            f"{speed}\n{speed.output[-1500:]}")


@pytest.mark.gpu
def test_naive_speed_check_is_not_a_strawman():
    """On a GPU: does the naive speed check pass a plain grid-stride kernel and fail the same
    kernel launched with a tiny grid, when nothing tampers with it?"""
    from numba import cuda

    from bank.naive import reference_add, naive_speed

    kernel = reference_add()

    class TinyGrid:
        def __getitem__(self, config):
            return kernel[16, 256]

    for method in ("events",):
        assert naive_speed(kernel, method=method)
        assert not naive_speed(TinyGrid(), method=method)
    cuda.synchronize()
