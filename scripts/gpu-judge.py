"""The judge on a real GPU (run by scripts/gpu-check judge on the lent H200).

1. every bank entry through the judge (correctness and, for grid_stride, speed): the timing cheats
   (side stream, pointer cache, patched timers, library fallback) must lose the speed points, the
   correct entries must keep them;
2. one correct submission's speed judged N times: the verdict must not change; the spread of its
   measured time and speedups is recorded;
3. the cost of judging: seconds for an exercise with the judge (sandboxed student process, cases
   sent over) against the same checks made in-process, the way grading worked before the judge;
4. ``solutions``: each chapter's own solution (its source's solution cells up to the exercise's)
   judged with its speed cell AAG_SOLUTION_REPEATS times (default 3), for AAG_SOLUTION_EXERCISES
   (default: every exercise with a speed cell): the share of the reference each run reaches,
   beside the bar, which is how a bar is set when a reference changes.

Each entry is graded as autograde grades it: ``bank.notebook`` (the chapter's real cells) through
``judge.judge_notebook``, the call JudgeSubmission makes, as tests/test_bank.py does in CPU mode.

Results: $OUT/judge-gpu.json, and a table printed last.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import numpy as np  # noqa: E402

import autograder as ag  # noqa: E402
import bank  # noqa: E402
from autograder.grading import judge, sandbox  # noqa: E402

OUT = Path(os.environ.get("OUT", "/tmp/gpu-out"))
REPEATS = int(os.environ.get("AAG_JUDGE_REPEATS", "10"))
# AAG_BANK_EXERCISES=vector_add,reduce_sum/ok_one_accumulator: judge only those exercises' bank
# entries (or those entries); AAG_BANK_BUDGET=SECONDS: start no entry once they are spent


def judged(exercise: str, code: str, settings) -> tuple[bool, float, str, dict]:
    """The entry graded as autograde grades it (bank.notebook: the chapter's real cells, one
    student process): (every cell passed, seconds, first error, details of the speed cell)."""
    t0 = time.perf_counter()
    results = judge.judge_notebook(bank.notebook(exercise, code), settings)
    seconds = time.perf_counter() - t0
    errors = [r.error for r in results.values() if not r.passed]
    speed_id = bank.EXERCISES[exercise]["speed_id"]
    speed = results[speed_id].details.get("speed") if speed_id in results else None
    flags = sorted({f for r in results.values() for f in r.flags})
    return all(r.passed for r in results.values()), seconds, (errors or [""])[0], \
        {"speed": speed, "flags": flags}


def main() -> int:
    parts = sys.argv[1:] or ["bank", "repeat", "cost", "nbcost"]
    OUT.mkdir(parents=True, exist_ok=True)
    settings = judge.Settings(secret="gpu-run-" + os.urandom(8).hex(), sandbox="auto",
                              protected=(REPO.resolve(),), exec_timeout=300)
    record = {"device": ag.backend.label, "sandbox": sandbox.unavailable_reason() or "bubblewrap",
              "versions": _versions(), "bank": [], "repeat": [], "cost": {}}
    print(f"backend: {ag.backend.label}; sandbox: {record['sandbox']}", flush=True)

    # 1. the bank ("gpu-only": just the entries that need a GPU)
    chosen = [e for e in bank.entries() if "bank" in parts or ("gpu-only" in parts and e.gpu_only)]
    only = [x for x in os.environ.get("AAG_BANK_EXERCISES", "").split(",") if x]
    if only:   # a few exercises' entries, to fit one device call
        chosen = [e for e in chosen if e.exercise in only or e.id in only]
    budget = float(os.environ.get("AAG_BANK_BUDGET", "inf"))
    started = time.monotonic()
    for entry in chosen:
        if time.monotonic() - started > budget:
            print(f"budget spent: {entry.id} and the entries after it not judged", flush=True)
            break
        passed, seconds, error, details = judged(entry.exercise, entry.code, settings)
        expected_pass = entry.kind == "ok"
        row = {"id": entry.id, "kind": entry.kind, "gpu_only": entry.gpu_only,
               "passed": passed, "right": passed == expected_pass,
               "seconds": round(seconds, 1), "error": error[:400], **details}
        record["bank"].append(row)
        print(f"{'ok ' if row['right'] else 'BAD'} {entry.id:45s} passed={passed!s:5s} "
              f"{seconds:6.1f} s  {error.splitlines()[0][:90] if error else ''}", flush=True)

    # 2. one correct submission's speed verdict, REPEATS times
    good = next(e for e in bank.entries() if e.exercise == "grid_stride" and e.kind == "ok")
    for i in range(REPEATS if "repeat" in parts else 0):
        passed, seconds, error, details = judged("grid_stride", good.code, settings)
        s = details["speed"] or {}
        cpu = (s.get("cpu_baseline") or {}).get("ms")
        record["repeat"].append({"passed": passed, "median_ms": s.get("median_ms"),
                                 "reference_ms": s.get("reference_ms"), "cpu_ms": cpu,
                                 "seconds": round(seconds, 1), "error": error[:300]})
        print(f"repeat {i + 1}: passed={passed} {s.get('median_ms')} ms "
              f"(reference {s.get('reference_ms')} ms) {seconds:.1f} s", flush=True)

    # 3. cost: judged (sandboxed student process, cases sent over) vs in-process checks, same code
    for exercise in ("vector_add",) if "cost" in parts else ():
        entry = next(e for e in bank.entries() if e.exercise == exercise and e.kind == "ok")
        passed, seconds, _, _ = judged(exercise, entry.code, settings)
        ns: dict = {}
        t0 = time.perf_counter()
        exec(bank.SETUP + entry.code, ns)
        spec = bank.EXERCISES[exercise]
        problem = getattr(getattr(ag.problems, spec["module"]), spec["problem"])
        problem.check(ns[spec["func"]])
        problem.check_hidden(ns[spec["func"]])
        inproc = time.perf_counter() - t0
        record["cost"][exercise] = {"judged_s": round(seconds, 2), "in_process_s": round(inproc, 2),
                                    "passed": passed}

    # 4. each chapter's solution against its speed bar, several times
    if "solutions" in parts:
        record["solutions"] = solution_speeds(settings)

    # 5. cost of a whole `nbgrader autograde` of chapter 2's solution, with and without the judge
    if "nbcost" in parts:
        record["nbgrader"] = autograde_cost()

    (OUT / f"judge-gpu-{'-'.join(parts)}.json").write_text(json.dumps(record, indent=1, default=str))
    _table(record)
    return 0 if all(r["right"] for r in record["bank"]) else 1


def solution_code(exercise: str) -> str:
    """The chapter's imports, its first cell and its solution cells up to this exercise's, in
    order, with what its other cells define that they read (:func:`_as_run`): what a learner who
    solved the chapter has defined when the exercise's test and speed cells run."""
    spec = bank.EXERCISES[exercise]
    lines = bank.chapter_source(exercise).read_text().splitlines()
    order = bank._cells(lines)
    end = order[spec["solution_id"]][0]
    imports = [line for line in lines[:end] if line.startswith(("import ", "from "))]
    solutions = {order[s["solution_id"]][0]: bank.cell(e, s["solution_id"])
                 for e, s in bank.EXERCISES.items() if s["chapter"] == spec["chapter"]}
    ran = [(solutions.get(k), source) for k, source in _code_cells(lines[:end + 1])]
    return "\n\n".join(["\n".join(imports), ran[0][1]] + _as_run(ran[1:]))


def _code_cells(lines: list[str]) -> list[tuple[int, str]]:
    """The code cells among ``lines`` (a chapter's percent-format source), in order, each as
    (the line of its ``# %%`` marker, its source)."""
    return [(k, bank.cell_body(lines, k)) for k, line in enumerate(lines)
            if line.startswith("# %%") and "[markdown]" not in line] or [(0, "")]


def _as_run(cells: list[tuple[str | None, str]]) -> list[str]:
    """What of the chapter's cells after its first a learner who solved it has run, for the
    solution cells to work as they do in the notebook: each solution cell (its solution, the
    first of a pair) whole, and of the other cells (the second) only the statements that define
    what the solution cells read, and what those statements read in turn (chapter 11's
    ``NOT_READY, AGGREGATE, PREFIX = ...``, the Triton chapters' ``if no_triton: ... else: import
    triton``). Demonstrations and timings whose results nothing reads are left out. A function
    reads its globals when it is called (a kernel: when first launched, by the test cell), so what
    a kept function reads counts as read after the last cell; other statements read where they
    stand."""
    import ast
    import builtins
    import symtable

    def scopes(tree) -> list:
        """``tree``'s symbol tables: the module's first, then those of what it defines."""
        tables, found = [symtable.symtable(ast.unparse(tree), "<cell>", "exec")], []
        while tables:
            found.append(tables.pop())
            tables += found[-1].get_children()
        return found

    def defined(tree) -> set[str]:
        return {s.get_name() for s in scopes(tree)[0].get_symbols()
                if s.is_assigned() or s.is_imported() or s.is_namespace()}

    def read(tree) -> tuple[set[str], set[str]]:
        """The module-level names ``tree`` reads where it stands, and those the functions it
        defines read when they are called (their globals; parameters and locals are theirs)."""
        module, *inner = scopes(tree)
        now = {s.get_name() for s in module.get_symbols() if s.is_referenced()}
        later = {s.get_name() for table in inner for s in table.get_symbols()
                 if s.is_referenced() and s.is_global()}
        return now - set(dir(builtins)), later - set(dir(builtins))

    steps = []                       # (cell, statement), in the order the cells run
    for k, (solution, source) in enumerate(cells):
        try:
            steps += [(k, st) for st in ast.parse(solution or source).body]
        except SyntaxError:          # a cell left for the learner to complete
            continue
    forced = {k for k, (solution, _) in enumerate(cells) if solution is not None}
    reads = [read(st) for _, st in steps]
    kept: set[int] = {i for i, (k, _) in enumerate(steps) if k in forced}
    while True:                      # until what the kept functions read when called is kept too
        needed = set().union(*(reads[i][1] for i in kept))
        now = set()
        for i in reversed(range(len(steps))):
            if i in kept or defined(steps[i][1]) & needed:
                now.add(i)
                needed = (needed - defined(steps[i][1])) | reads[i][0]
        if now == kept:
            break
        kept = now
    ran = []                         # a solution cell as written, the others' statements kept
    for k, st in (steps[i] for i in sorted(kept)):
        if k not in forced:
            ran.append(ast.unparse(st))
        elif not ran or ran[-1] is not cells[k][0]:
            ran.append(cells[k][0])
    return ran


def solution_speeds(settings) -> list[dict]:
    chosen = [x for x in os.environ.get("AAG_SOLUTION_EXERCISES", "").split(",") if x] or \
        [e for e, s in bank.EXERCISES.items() if s["speed_id"]]
    repeats = int(os.environ.get("AAG_SOLUTION_REPEATS", "3"))
    rows = []
    for exercise in chosen:
        spec = bank.EXERCISES[exercise]
        problem = getattr(getattr(ag.problems, spec["module"]), spec["problem"])
        for i in range(repeats):
            passed, seconds, error, details = judged(exercise, solution_code(exercise), settings)
            s = details["speed"] or {}
            med, ref = s.get("median_ms"), s.get("reference_ms")
            row = {"exercise": exercise, "run": i + 1, "passed": passed, "median_ms": med,
                   "reference_ms": ref, "fraction": round(ref / med, 3) if med and ref else None,
                   "bar": problem.speed.min_fraction_of_reference if problem.speed else None,
                   "seconds": round(seconds, 1), "error": error[:300]}
            rows.append(row)
            print(f"solution {exercise} run {i + 1}: passed={passed} {med} ms, reference {ref} ms, "
                  f"{row['fraction']} of it (bar {row['bar']}) {seconds:.1f} s "
                  f"{error.splitlines()[0][:100] if error else ''}", flush=True)
    return rows


def autograde_cost(chapter: str = "ch02_data_parallel") -> dict:
    """Seconds for one submission's autograde: the course's pipeline (sandboxed kernel + judge)
    against nbgrader's plain one (kernel with the grader's rights, checks made in that kernel)."""
    import tempfile
    import nbgrader_helpers as h
    out = {}
    for label, extra in (("with judge", ""), ("without judge", NO_JUDGE)):
        root = Path(tempfile.mkdtemp(prefix="aag-cost-"))
        h.make_course(root, [chapter])
        with open(root / "nbgrader_config.py", "a") as f:
            f.write(extra)
        h.prepare(root, chapter)
        h.submit(root, chapter, "sol", h.read_nb(root / "solutions" / chapter / f"{chapter}.ipynb"))
        t0 = time.perf_counter()
        h.nbgrader(root, "autograde", chapter, "--force", timeout=3000)
        seconds = time.perf_counter() - t0
        scores = h.grades(root, chapter, "sol")
        out[label] = {"seconds": round(seconds, 1),
                      "score": sum(s for s, _ in scores.values()),
                      "max": sum(m for _, m in scores.values())}
        print(f"autograde {chapter} {label}: {seconds:.1f} s, {out[label]['score']}/{out[label]['max']}",
              flush=True)
    return out


NO_JUDGE = """
# nbgrader's plain pipeline: no judge, the kernel unsandboxed (checks run in the learner's kernel)
c.Autograde.autograde_preprocessors = [p for p in c.Autograde.autograde_preprocessors
                                       if p.__name__ != "JudgeSubmission"]
c.SandboxedKernelManager.sandbox = "off"
"""


def _versions() -> dict:
    import numba
    out = {"python": sys.version.split()[0], "numpy": np.__version__, "numba": numba.__version__}
    try:
        import numba_cuda
        out["numba-cuda"] = numba_cuda.__version__
    except Exception:
        pass
    try:
        import cupy
        out["cupy"] = cupy.__version__
    except Exception:
        pass
    return out


def _table(record: dict) -> None:
    rows = record["bank"]
    bad = [r for r in rows if r["kind"] != "ok"]
    good = [r for r in rows if r["kind"] == "ok"]
    caught = sum(r["right"] for r in bad)
    alarms = sum(not r["right"] for r in good)
    print("\n=== judge on", record["device"], "| sandbox:", record["sandbox"], "===")
    print(f"bank: caught {caught}/{len(bad)} wrong or cheating, false alarms {alarms}/{len(good)}")
    for r in rows:
        if r["gpu_only"] or not r["right"]:
            print(f"  {'caught' if r['right'] else 'WRONG '} {r['id']}: {r['error'].splitlines()[0][:110] if r['error'] else 'passed'}")
    rep = record["repeat"]
    if rep:
        verdicts = {r["passed"] for r in rep}
        med = [r["median_ms"] for r in rep if r["median_ms"]]
        ref = [r["reference_ms"] for r in rep if r["reference_ms"]]
        cpu = [r["cpu_ms"] for r in rep if r["cpu_ms"]]
        print(f"repeat x{len(rep)}: verdicts {verdicts}; kernel median {min(med):.4f}-{max(med):.4f} ms; "
              f"fraction of reference {min(f / m for f, m in zip(ref, med)):.3f}-"
              f"{max(f / m for f, m in zip(ref, med)):.3f}; speedup vs CPU baseline "
              f"{min(c / m for c, m in zip(cpu, med)):.1f}-{max(c / m for c, m in zip(cpu, med)):.1f}x; "
              f"judge seconds {min(r['seconds'] for r in rep)}-{max(r['seconds'] for r in rep)}")
    by_exercise: dict[str, list] = {}
    for r in record.get("solutions", []):
        by_exercise.setdefault(r["exercise"], []).append(r)
    for ex, runs in by_exercise.items():
        fractions = [r["fraction"] for r in runs if r["fraction"]]
        span = f"{min(fractions):.3f}-{max(fractions):.3f}" if fractions else "none timed"
        print(f"solution {ex}: passed {sum(r['passed'] for r in runs)}/{len(runs)}; share of the "
              f"reference {span} (bar {runs[0]['bar']}); solution "
              f"{', '.join(str(r['median_ms']) for r in runs)} ms, reference "
              f"{', '.join(str(r['reference_ms']) for r in runs)} ms")
    for ex, c in record["cost"].items():
        print(f"cost {ex}: judged {c['judged_s']} s vs in-process {c['in_process_s']} s")
    for label, c in record.get("nbgrader", {}).items():
        print(f"autograde ch02 solution {label}: {c['seconds']} s, {c['score']}/{c['max']} points")


if __name__ == "__main__":
    sys.exit(main())
