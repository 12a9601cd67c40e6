"""Where one submission's grading time goes: each chapter's solution autograded by a serial
``nbgrader autograde`` (nbgrader's kernel, then the judge, speed cells included), split into
nbgrader's run of the notebook (per cell, from the cells' execution timestamps), the judge's work
per grade cell (cells run, checks, speed-test phases, from ``judge.json``) and the rest (nbgrader
and kernel start-up). The chapter's CPU baselines are measured first (once per machine, then
cached, as for a class) and reported apart. Into $OUT/grading-cost.json and a table on stdout.

    python3 scripts/gpu-grading-cost.py [--budget SECONDS] ch01_introduction ch02_data_parallel ...

On the GPU machine through ``scripts/gpu-check cost``; in CPU mode it runs too (speed cells are
then not timed). Chapters are graded one after another; none is started once the budget is spent.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import nbgrader_helpers as h  # noqa: E402
from autograder.grading.batch import NBGRADER  # noqa: E402


def _stamp(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def cell_seconds(nb) -> list[tuple[float, str, str]]:
    """(seconds, grade id or "", first line) of every code cell nbgrader's kernel ran."""
    rows = []
    for cell in nb.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type != "code" or "shell.execute_reply" not in timing:
            continue
        begin = timing.get("iopub.execute_input") or timing.get("iopub.status.busy")
        if not begin:
            continue
        seconds = _stamp(timing["shell.execute_reply"]) - _stamp(begin)
        first = next((line for line in cell.source.splitlines() if line.strip()), "")[:70]
        rows.append((round(seconds, 2), cell.metadata.get("nbgrader", {}).get("grade_id", ""), first))
    return rows


# The CPU baselines a chapter's speed tests compare with are measured once per machine and cached
# (serial loops over 2^28 values take seconds): measured here first, so that the autograde below
# costs what every submission after the first one costs.
WARM_BASELINES = """
import sys, time
from autograder.grading import speed
from autograder.problems import REGISTRY
start = time.monotonic()
for p in REGISTRY[sys.argv[1].split("_")[0]].problems:
    if p.speed is not None:
        speed.cpu_baselines(p, p.sizes.speed, only=(speed.speed_bar(p).baseline,))
print(round(time.monotonic() - start, 1))
"""


def warm_baselines(chapter: str) -> float:
    p = subprocess.run([sys.executable, "-c", WARM_BASELINES, chapter], env=h.env(),
                       capture_output=True, text=True, timeout=1200)
    if p.returncode:
        raise RuntimeError(f"measuring {chapter}'s CPU baselines failed:\n{p.stderr[-3000:]}")
    return float(p.stdout.split()[-1])


# nbgrader's log lines with the time since the run started, so the log is a timeline (where
# "the rest" goes: nbgrader's start, the kernel's, the judge's steps between its cells).
LOG_TIMES = ("--Application.log_format=%(relativeCreated)8.0f ms %(levelname)s %(message)s",)


def timeline(log: str) -> list[str]:
    """The log lines that carry a time, the long ones cut."""
    return [line[:160] for line in log.splitlines() if line[:12].strip().endswith("ms")]


def _autograde(chapter: str, root: Path) -> subprocess.CompletedProcess:
    """``nbgrader autograde`` as grade-all runs it, its log lines printed as they come (each with
    its time): a chapter that runs past the device's time limit still shows where it was."""
    proc = subprocess.Popen([*NBGRADER, "autograde", chapter, "--student=sol", "--force",
                             *LOG_TIMES], cwd=root, env=h.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        print(f"  {chapter[:4]} {line.rstrip()[:200]}", flush=True)
    proc.wait(timeout=3000)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(lines), "")


def grade_chapter(chapter: str, workdir: Path) -> dict:
    baselines = warm_baselines(chapter)
    root = workdir / chapter
    h.make_course(root, [chapter])
    h.prepare(root, chapter)
    h.submit(root, chapter, "sol", h.read_nb(root / "solutions" / chapter / f"{chapter}.ipynb"))
    start = time.monotonic()
    p = _autograde(chapter, root)
    wall = time.monotonic() - start
    graded = root / "autograded" / "sol" / chapter
    cells = cell_seconds(h.read_nb(graded / f"{chapter}.ipynb")) if p.returncode == 0 else []
    judged = json.loads((graded / "judge.json").read_text()) if (graded / "judge.json").is_file() else {}
    scores = h.grades(root, chapter, "sol") if p.returncode == 0 else {}
    execute = sum(s for s, *_ in cells)
    judge = sum(r.get("seconds", 0) for r in judged.values())
    return {
        "chapter": chapter, "rc": p.returncode, "wall_s": round(wall, 1),
        "nbgrader_kernel_cells_s": round(execute, 1), "judge_s": round(judge, 1),
        "rest_s": round(wall - execute - judge, 1), "cpu_baselines_once_s": baselines,
        "slowest_cells": sorted(cells, reverse=True)[:6],
        "judge": {cell: {"seconds": r.get("seconds"), "passed": r.get("passed"),
                         "cells_run": r.get("details", {}).get("cells_run"),
                         "cells_seconds": r.get("details", {}).get("cells_seconds"),
                         "processes_started": r.get("details", {}).get("processes_started"),
                         "other_warp_sizes_seconds": r.get("details", {}).get("other_warp_sizes_seconds"),
                         "check_seconds": r.get("details", {}).get("check_seconds"),
                         "speed_seconds": r.get("details", {}).get("speed", {}).get("seconds"),
                         "peak_rss_mib": r.get("details", {}).get("peak_rss_mib"),
                         "error": "" if r.get("passed") else str(r.get("error"))[:2000],
                         "speed": ([str(v)[:600] for v in r.get("verdicts", [])]
                                   if "speed" in cell or r.get("details", {}).get("speed") else [])}
                  for cell, r in judged.items()},
        "score": [sum(s for s, _ in scores.values()), sum(m for _, m in scores.values())],
        "timeline": timeline(p.stdout + p.stderr),
        "log_tail": "" if p.returncode == 0 else (p.stdout + p.stderr)[-3000:],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("chapters", nargs="*", default=h.real_chapters())
    ap.add_argument("--budget", type=float, default=480)
    args = ap.parse_args()
    out = Path(os.environ.get("OUT", "/tmp/gpu-out"))
    out.mkdir(parents=True, exist_ok=True)
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip() if shutil.which("nvidia-smi") else "none"
    from importlib.metadata import version
    results = {"date": datetime.date.today().isoformat(), "device": gpu,
               "versions": {p: version(p) for p in ("numba-cuda", "numpy", "nbgrader")},
               "chapters": []}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="grading-cost-") as tmp:
        for chapter in args.chapters:
            if time.monotonic() - start > args.budget:
                print(f"budget spent: {chapter} not graded", flush=True)
                continue
            r = grade_chapter(chapter, Path(tmp))
            results["chapters"].append(r)
            (out / "grading-cost.json").write_text(json.dumps(results, indent=1))
            print(json.dumps({k: v for k, v in r.items() if k not in ("log_tail", "timeline")}), flush=True)
            if r["rc"]:
                print(r["log_tail"], flush=True)
    print("\n| chapter | wall (s) | nbgrader's kernel: cells (s) | judge (s) | rest (s) | score "
          "| CPU baselines, once per machine (s) |")
    print("|---|---|---|---|---|---|---|")
    for r in results["chapters"]:
        print(f"| {r['chapter']} | {r['wall_s']} | {r['nbgrader_kernel_cells_s']} | {r['judge_s']} | "
              f"{r['rest_s']} | {r['score'][0]:g}/{r['score'][1]:g} | {r['cpu_baselines_once_s']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
