"""What the course's reference kernels are held to, read from an ``aag bench`` run
(``aag bench --goals bench.json`` prints the table; no GPU needed).

Each goal compares the fastest kernel of an exercise's row, the course reference or one of its
bench rows, with a yardstick timed in the same run: a copy of the same bytes, CUB (through
``cuda.compute``) or cuBLAS (``torch.mm``, else CuPy). The table says whether the reference meets
it, or only a bench row, or neither; a row that misses says so, and the run's profile says why.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Goal:
    exercise: str
    against: str          # "copy": a copy of the same bytes; "cub"; "cublas"
    at_least: float | None  # the kernel's speed as a share of the yardstick's; None: shown only
    what: str


GOALS = (
    Goal("vector_add_grid_stride", "copy", 0.90, "vector add, 2^28"),
    Goal("transpose_tiled", "copy", 0.85, "transpose, 8192 × 12288"),
    Goal("matmul_register_tiled", "cublas", 0.75, "SGEMM 4096³ fp32, no tensor cores"),
    Goal("conv2d_tiled", "copy", 0.70, "2-D convolution, r = 2"),
    Goal("stencil_coarsened", "copy", 0.70, "3-D stencil"),
    Goal("blur", "copy", 0.70, "blur, r = 2"),
    Goal("scan_single_pass", "cub", 1.0, "scan 2^28 fp32, against CUB"),
    Goal("scan_single_pass", "copy", 0.70, "scan 2^28 fp32, against the copy"),
    Goal("merge_tiled", "copy", 0.35, "merge of 2 × 2^27 keys"),
    Goal("reduce_sum", "cub", 0.97, "reduction 2^28, hold CUB's speed"),
    Goal("histogram_private", "cub", None, "byte histogram 2^28"),
)

CALL_SIZE = 1 << 24          # where the per-call goal is set
CALL_HOST_ABOVE_LAUNCH_US = 30.0
CALL_END_TO_END_OF_TORCH = 1.3
_CALL_OPS = {"sum": "torch.sum", "scan": "torch.cumsum", "histogram": "torch.bincount"}


def _yardstick(row: dict, against: str) -> tuple[float, str] | None:
    """(ms, label) of the yardstick in a bench row, None where the run has none."""
    if against == "copy":
        return row["copy_ms"], "copy"
    if against == "cub":
        if "cub_ms" in row:
            return row["cub_ms"], row.get("cub_label", "CUB")
        if "torch_ms" in row and "CUB" in row.get("torch_label", ""):
            return row["torch_ms"], row["torch_label"]
        return None
    for key in ("torch", "vendor"):             # cuBLAS: PyTorch's, else CuPy's
        if f"{key}_ms" in row:
            return row[f"{key}_ms"], row[f"{key}_label"]
    return None


def goal_rows(bench: dict) -> list[dict]:
    """One dict per goal: the reference's share of the yardstick, the fastest kernel's (and its
    label), and which of them meets the goal ("reference", "bench row", "no", "–" without a
    goal, "not in this run")."""
    rows = {r["problem"]: r for r in bench.get("references", []) if "error" not in r}
    out = []
    for goal in GOALS:
        row = rows.get(goal.exercise)
        yardstick = row and _yardstick(row, goal.against)
        if not yardstick:
            out.append({"goal": goal, "met": "not in this run"})
            continue
        ms, label = yardstick
        kernels = {"course reference": row["reference_ms"], **row.get("variants", {})}
        best = min(kernels, key=kernels.get)
        share = {name: ms / t for name, t in kernels.items()}
        met = "–" if goal.at_least is None else (
            "reference" if share["course reference"] >= goal.at_least else
            "bench row" if share[best] >= goal.at_least else "no")
        out.append({"goal": goal, "yardstick_ms": ms, "yardstick": label,
                    "reference_ms": row["reference_ms"],
                    "reference_share": share["course reference"], "best": best,
                    "best_ms": kernels[best], "best_share": share[best], "met": met,
                    "builds": row.get("builds", {}).get(best)})
    return out


def call_rows(calls: dict, n: int = CALL_SIZE) -> list[dict]:
    """The per-call goal at ``n`` elements, per operation: the course helper's host time above
    one bound launch, and its end-to-end time over PyTorch's."""
    from autograder.problems.ch22 import BOUND_LAUNCH, call_kind
    rows = calls.get("rows", [])
    bound = next((r for r in rows if r["label"] == BOUND_LAUNCH), None)
    out = []
    for op, torch_name in _CALL_OPS.items():
        mine = next((r for r in rows if r["op"] == op and r["n"] == n
                     and call_kind(r["label"]) == "course helper"), None)
        torch = next((r for r in rows if r["op"] == op and r["n"] == n
                      and r["label"].startswith(torch_name)), None)
        if mine is None or bound is None:
            out.append({"op": op, "met": "not in this run"})
            continue
        above = mine["host_us"] - bound["host_us"]
        ratio = mine["end_to_end_us"] / torch["end_to_end_us"] if torch else None
        met = above <= CALL_HOST_ABOVE_LAUNCH_US and (ratio is None
                                                       or ratio <= CALL_END_TO_END_OF_TORCH)
        out.append({"op": op, "label": mine["label"], "host_above_launch_us": above,
                    "end_to_end_us": mine["end_to_end_us"],
                    "torch": torch and torch["label"], "torch_us": torch and torch["end_to_end_us"],
                    "ratio": ratio, "met": "yes" if met else "no"})
    return out


def _share(goal: Goal, share: float) -> str:
    if goal.against == "copy":
        return f"{share:.0%} of the copy"
    return f"{share:.2f}× {'CUB' if goal.against == 'cub' else 'cuBLAS'}'s speed"


def goals_table(bench: dict) -> str:
    """The goals as a Markdown table (then the per-call goal's), from one ``aag bench`` payload."""
    lines = ["| row | goal | course reference | fastest kernel | yardstick (same run) | met by |",
             "|---|---|---|---|---|---|"]
    for r in goal_rows(bench):
        goal = r["goal"]
        aim = "–" if goal.at_least is None else f"≥ {_share(goal, goal.at_least)}"
        if r["met"] == "not in this run":
            lines.append(f"| {goal.what} | {aim} | – | – | – | not in this run |")
            continue
        best = ("the reference" if r["best"] == "course reference" else
                f"{r['best']}: {r['best_ms']:.3f} ms, {_share(goal, r['best_share'])}")
        if r["builds"]:
            best += f" (ran: {'; '.join(r['builds'])})"
        lines.append(f"| {goal.what} | {aim} | {r['reference_ms']:.3f} ms, "
                     f"{_share(goal, r['reference_share'])} | {best} | {r['yardstick']} "
                     f"{r['yardstick_ms']:.3f} ms | {r['met']} |")
    calls = call_rows(bench.get("calls", {}))
    if any(c["met"] != "not in this run" for c in calls):
        lines += ["", f"Calling from Python at {CALL_SIZE:,} elements (goal: at most "
                  f"{CALL_HOST_ABOVE_LAUNCH_US:.0f} µs of host time above one bound launch, end "
                  f"to end within {CALL_END_TO_END_OF_TORCH}× of PyTorch):", "",
                  "| operation | course helper | host time above a bound launch | end to end "
                  "| PyTorch end to end | ratio | met |", "|---|---|---|---|---|---|---|"]
        for c in calls:
            if c["met"] == "not in this run":
                lines.append(f"| {c['op']} | – | – | – | – | – | not in this run |")
                continue
            torch = f"{c['torch_us']:.1f} µs ({c['torch']})" if c["torch"] else "–"
            ratio = f"{c['ratio']:.2f}×" if c["ratio"] is not None else "–"
            lines.append(f"| {c['op']} | {c['label']} | {c['host_above_launch_us']:.1f} µs | "
                         f"{c['end_to_end_us']:.1f} µs | {torch} | {ratio} | {c['met']} |")
    return "\n".join(lines)


def runs_in(data: dict) -> dict[str, dict]:
    """The ``aag bench`` runs in a JSON file: the file itself where it is one (``bench.json``),
    else each of its values that is one (the raw files in ``docs/`` keep several under names)."""
    if "references" in data:
        return {"bench.json": data}
    return {name: run for name, run in data.items()
            if isinstance(run, dict) and "references" in run}
