"""Class grading on the GPU machine through ``aag grade-all``'s Dask path: per chapter, a course
with N learners who submitted the chapter's solution, graded by a local cluster (one worker per
GPU, speed tasks alone on their GPU); per-submission seconds (the time a task holds its GPU),
scores and throughput, into $OUT/grade-all.json and a table on stdout.

    python3 scripts/gpu-grade-all.py [--budget SECONDS] ch01_introduction:3 ch02_data_parallel:2

Chapters are graded one after another; none is started once the budget is spent.
"""

from __future__ import annotations

import argparse
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


def grade_chapter(chapter: str, learners: int, workdir: Path) -> dict:
    root = workdir / chapter
    h.make_course(root, [chapter])
    h.prepare(root, chapter)
    solution = h.read_nb(root / "solutions" / chapter / f"{chapter}.ipynb")
    for k in range(learners):
        h.submit(root, chapter, f"learner{k:02d}", solution)
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "autograder.tools.grade_all", chapter,
                        "--dashboard", ":0"], cwd=root, env=h.env(), capture_output=True, text=True,
                       timeout=3000)
    wall = time.monotonic() - start
    report = json.loads((root / ".aag" / "grade-all" / f"{chapter}.json").read_text()) \
        if (root / ".aag" / "grade-all" / f"{chapter}.json").is_file() else {}
    out = Path(os.environ.get("OUT", "/tmp/gpu-out"))
    for judged in sorted((root / "autograded").glob(f"*/{chapter}/judge.json")):
        shutil.copy2(judged, out / f"{chapter}-{judged.parent.parent.name}-judge.json")
    speed = {}
    for learner in report:
        try:
            grades = h.grades(root, chapter, learner)
        except Exception:       # not graded
            continue
        speed[learner] = {c: s for c, s in grades.items() if c.endswith("_speed") or s[0] < s[1]}
    return {"chapter": chapter, "learners": learners, "rc": p.returncode, "wall_s": round(wall, 1),
            "per_submission_s": [r.get("seconds") for r in report.values()],
            "scores": {k: (r.get("score"), r.get("max_score")) for k, r in report.items()},
            "speed_cells": speed, "log_tail": (p.stdout + p.stderr)[-3000:]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("chapters", nargs="+", help="chapter:learners")
    ap.add_argument("--budget", type=float, default=450)
    args = ap.parse_args()
    out = Path(os.environ.get("OUT", "/tmp/gpu-out"))
    out.mkdir(parents=True, exist_ok=True)
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    from importlib.metadata import version
    results = {"device": gpu, "versions": {p: version(p) for p in
                                           ("numba-cuda", "numpy", "nbgrader", "distributed")},
               "chapters": []}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpu-grade-all-") as tmp:
        for item in args.chapters:
            chapter, _, n = item.partition(":")
            if time.monotonic() - start > args.budget:
                print(f"budget spent: {chapter} not graded", flush=True)
                continue
            r = grade_chapter(chapter, int(n or 1), Path(tmp))
            results["chapters"].append(r)
            (out / "grade-all.json").write_text(json.dumps(results, indent=1))
            print(f"{chapter}: rc {r['rc']}, {r['learners']} learners in {r['wall_s']} s, "
                  f"per submission {r['per_submission_s']}, scores {r['scores']}, "
                  f"speed {r['speed_cells']}", flush=True)
            if r["rc"] != 0:
                print(r["log_tail"], flush=True)
    print("\n| chapter | learners | wall (s) | per submission (s) | submissions/hour |")
    print("|---|---|---|---|---|")
    for r in results["chapters"]:
        each = [s for s in r["per_submission_s"] if s]
        rate = 3600 * len(each) / r["wall_s"] if r["wall_s"] else 0
        print(f"| {r['chapter']} | {r['learners']} | {r['wall_s']} | "
              f"{', '.join(f'{s:.0f}' for s in each)} | {rate:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
