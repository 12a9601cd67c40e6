"""The "measure it" cells of chapters 13–27 run on the GPU with the course's kernels, and
``ag.profile`` run on a kernel defined here, as a learner's notebook defines it. Every row goes to
``$OUT/measure_chNN.json``; each cell's picture is recorded (``ag.experiments.steps`` with
``AAG_RECORD``) as ``$OUT/record/h200_chNN_measure.json``, to be copied into the chapter's folder,
where the cell shows it to learners without a GPU.

    python3 scripts/gpu-measure.py [--out DIR] [parts: ch13 ... ch27, profile]

On the GPU machine through ``scripts/gpu-check measure``. Each part is timed with CUDA events
after warm-up (the chapters' own ``measure``); one failing part does not stop the others."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import autograder as ag  # noqa: E402
from numba import cuda  # noqa: E402


def _facts() -> dict:
    from autograder.machine.facts import gpu_facts, versions
    try:
        name = gpu_facts()["name"]
    except Exception:               # CPU mode: no device to name
        name = ag.backend.label
    return {"device": name, "versions": versions(),
            "date": time.strftime("%Y-%m-%d")}


def ch13() -> list[dict]:
    from autograder.problems import ch13 as c
    sorts = {"radix sort (course)": c.reference_radix_sort(),
             "merge sort (course)": lambda k, v, ok, ov, threads: c.merge_sort(k, v, ok, ov,
                                                                                threads=threads)}
    rows = c.measure(sorts, repeats=10)
    ag.experiments.steps(**c.chart(rows))
    return rows + c.time_cpu_sorts(1 << 22)


def ch14() -> list[dict]:
    from autograder.problems import ch14 as c
    rows = c.measure(None)
    ag.experiments.steps(**c.chart(rows))
    return rows


def ch15() -> list[dict]:
    from autograder.problems import ch15 as c
    rows = c.measure({"push (course)": ("push", c.reference_push()),
                      "pull (course)": ("pull", c.reference_pull()),
                      "edge (course)": ("edge", c.reference_edge()),
                      "frontier queue (course)": ("frontier", c.reference_frontier()),
                      "privatized frontier (course)": ("private", c.reference_private())})
    copy = ag.timing.copy_ceiling(c.bfs_bytes(c.SPEED_SIZE))
    ag.experiments.steps(**c.chart(rows, copy_ms=copy.median_ms))
    return rows


def ch16() -> list[dict]:
    from autograder.problems import ch16 as c
    rows = c.measure(None)
    ag.experiments.steps(**c.chart(rows))
    return rows


def ch17() -> list[dict]:
    from autograder.problems import ch17 as c
    rows = c.measure(None)
    ag.experiments.steps(**c.chart(rows))
    trig = c.trig_errors()        # the fast sine's error, shown as a table without a GPU
    record = Path(os.environ["AAG_RECORD"])
    record.mkdir(parents=True, exist_ok=True)
    (record / f"{c.TRIG}.json").write_text(json.dumps({**_facts(), "rows": trig}, indent=1,
                                                      default=str))
    return rows + trig


def ch18() -> list[dict]:
    from autograder.problems import ch18 as c
    rows = c.measure(None)
    ag.experiments.steps(**c.chart(rows))
    return rows


def ch19() -> list[dict]:
    from autograder.problems import ch19 as c
    rows = c.measure(None)
    ag.experiments.steps(**c.chart(rows))
    return rows


def ch20() -> list[dict]:
    from autograder.problems import ch20 as c
    # 4 ranks sharing the GPU, 514 × 512 × 512; the blocking step a second time, as a learner's
    # would be timed, shows how far two runs of the same step differ (the speed bar's noise).
    rows = c.measure({"blocking step again, as a learner's": c.reference_step_blocking},
                     repeats=30)
    ag.experiments.steps(**c.chart(rows[:2]))
    # The speed check's bar, on the GPU: the course's overlapped step passes, its blocking one not.
    verdicts = []
    for name, step in (("overlapped", c.reference_step_overlap),
                       ("blocking", c.reference_step_blocking)):
        try:
            verdict = c.stencil_overlap_speed.check(step)
            verdicts.append({"label": f"speed check: course {name} step", "passed": True,
                             "verdict": str(verdict)[:600]})
        except Exception as failure:    # noqa: BLE001 - the check's verdict, recorded
            verdicts.append({"label": f"speed check: course {name} step", "passed": False,
                             "verdict": str(failure)[:600]})
        print(verdicts[-1])
    return rows + verdicts


def ch21() -> list[dict]:
    from autograder.problems import ch21 as c
    rows = c.measure(None)
    ag.experiments.steps(**c.chart(rows))
    return rows


def ch22() -> list[dict]:
    from autograder.problems import ch22 as c
    c.record_timelines()                     # $AAG_RECORD/h200_ch22_timeline.json
    rows = c.measure()
    ag.experiments.steps(**c.chart(rows))    # $AAG_RECORD/h200_ch22_measure.json
    return rows + [{"label": "launch: " + r["label"], "ms": r["us_per_launch"] / 1e3}
                   for r in c.launch_overhead()]


def ch24() -> list[dict]:
    from autograder.problems import ch24 as c
    return c.measure(None)                   # $AAG_RECORD/h200_ch24_measure.json (its own chart)


def ch24t() -> list[dict]:
    """Chapter 24's Numba warp kernel beside its Triton kernel (24.4's comparison cell, with the
    course's kernels in the learner's places); not recorded for a chart."""
    from autograder.problems import ch24 as c
    record = os.environ.pop("AAG_RECORD", None)
    try:
        return c.compare_triton(c.reference_softmax_warp(), c.reference_softmax_triton())
    finally:
        if record is not None:
            os.environ["AAG_RECORD"] = record


def ch25() -> list[dict]:
    from autograder.problems import ch25 as c
    rows = c.measure()
    c.record(rows, os.environ["AAG_RECORD"])   # $AAG_RECORD/h200_ch25_measure.json
    return rows


def ch25t() -> list[dict]:
    """Chapter 25's Triton LayerNorm beside its Numba kernel (25.4's comparison cell, with the
    course's Triton kernel in the learner's place); not recorded for a chart."""
    from autograder.problems import ch25 as c
    return c.compare_triton(c.reference_layernorm_triton())


def ch26() -> list[dict]:
    """Chapter 26's measuring cell with the course's kernels (naive, FlashAttention-style in
    Numba, Triton) and PyTorch's SDPA, math and flash backends, where torch is installed:
    recorded as $AAG_RECORD/h200_ch26_measure.json for CPU mode. Then, not recorded, the causal
    pass at n = 4096, d = 64 (the tiles past the diagonal skipped: about half the work)."""
    from autograder.problems import ch26 as c
    rows = c.measure()
    c.record(rows, os.environ["AAG_RECORD"])   # $AAG_RECORD/h200_ch26_measure.json
    causal = c.measure(lengths=(4096,), head_dims=(64,), causal=1)
    return rows + [{**r, "label": r["label"] + ", causal"} for r in causal]


def ch27() -> list[dict]:
    """Chapter 27's measuring cell with the course's kernels (int8, int4 in Numba and Triton, the
    float16 product, PyTorch's float16 product and dequantise-then-cuBLAS where PyTorch is
    installed, each format's copy), recorded for the chart, and the Triton comparison cell with the
    course's kernels in the learner's places (not recorded)."""
    from autograder.problems import ch27 as c
    rows = c.measure()
    c.record(rows, os.environ["AAG_RECORD"])   # $AAG_RECORD/h200_ch27_measure.json
    try:
        rows += [{**r, "label": "compare: " + r["label"]} for r in c.compare_triton(
            c.reference_int4_triton(), c.reference_int4_matmul())
            if r["label"].startswith("int4")]
    except Exception as exc:                    # noqa: BLE001 - Triton missing or failing
        rows.append({"label": "compare_triton", "failed": f"{type(exc).__name__}: {exc}"})
    return rows


@cuda.jit
def learner_scale(x, out, factor):       # a kernel as a learner's notebook cell defines it
    i = cuda.grid(1)
    if i < out.size:
        out[i] = factor * x[i]


def profile() -> dict:
    n = (1 << 24) + 3
    x = cuda.to_device(np.random.default_rng(0).standard_normal(n, dtype=np.float32))
    out = cuda.device_array(n, np.float32)
    why = ag.profiler.why_not()
    if why:
        return {"why_not": why}
    report = ag.profile(learner_scale, (n + 255) // 256, 256, x, out, np.float32(2.0),
                        label="scale (defined in __main__)")
    print(ag.profiler.live([report]).text())
    return {"label": report.label, "kernel": report.kernel, "ms": report.ms,
            "dram_bytes": report.dram_bytes, "gbps": report.gbps,
            "array_bytes": report.array_bytes, "metrics": report.metrics}


PARTS = {"ch13": ch13, "ch14": ch14, "ch15": ch15, "ch16": ch16, "ch17": ch17, "ch18": ch18,
         "ch19": ch19, "ch20": ch20, "ch21": ch21, "ch22": ch22, "ch24": ch24, "ch24t": ch24t, "ch25": ch25,
         "ch25t": ch25t, "ch26": ch26, "ch27": ch27, "profile": profile}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/measure"))
    ap.add_argument("parts", nargs="*", default=list(PARTS))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ["AAG_RECORD"] = str(out / "record")     # ag.experiments.steps writes the pictures
    facts = _facts()
    for part in args.parts:
        start = time.monotonic()
        try:
            rows = PARTS[part]()
        except Exception as exc:
            traceback.print_exc()
            rows = {"failed": f"{type(exc).__name__}: {exc}"}
        seconds = time.monotonic() - start
        name = f"measure_{part}.json" if part.startswith("ch") else f"{part}.json"
        (out / name).write_text(json.dumps({**facts, "seconds": round(seconds, 1), "rows": rows},
                                           indent=1, default=str))
        print(f"== {part} ({seconds:.1f} s)")
        for r in rows if isinstance(rows, list) else [rows]:
            print("  " + json.dumps(r, default=str)[:300])
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
