"""The GPU MODE track's kernels on the H200's roofline, from one measuring run.

Reads the rows of one `scripts/gpu-check measure` run of parts ch24, ch24t, ch25, ch25t, ch26 and
ch27 (its `measure_<part>.json` files, or the copy kept in a docs JSON under one key), places each
kernel at one size on the roofline and writes the figure and a Markdown table:

    python scripts/track-roofline.py --run /work/.device/N/out --figure docs/figures/x.png
    python scripts/track-roofline.py --json docs/h200-2026-12-03.json --key session_2026_12_03g

How each point is counted (the least a kernel must do, so that an achieved FLOP/s or GB/s is an
honest fraction of its roof):
- bytes: the inputs read once and the outputs written once. For softmax, LayerNorm and the
  quantized products that is the rows' own `gbps · ms`; for attention, Q, K and V in float16 and
  O in float16, 8 bytes per token and head dimension.
- FLOPs: softmax 5 per element (max, subtract, exponential, add, divide), LayerNorm 7 (mean,
  variance, normalise, scale and shift), RMSNorm 4, attention 4·n²·d per head (the two products),
  a quantized or float16 product 2·N·K per activation row. Attention is the only one whose
  intensity passes the ridge.
- roofs: the fastest copy of 256 MiB or more in the same run (memory: smaller copies gain from
  the 60 MiB L2), 132 SMs × 128 float32
  lanes × 2 × 1.98 GHz (the CUDA cores, all a Numba kernel can use) and NVIDIA's 989 TFLOP/s of
  dense float16 on the tensor cores (what `tl.dot` and PyTorch's flash backend use).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PARTS = ("ch24", "ch24t", "ch25", "ch25t", "ch26", "ch27")
from autograder.problems.ch26.notebook import PEAK_FP16_TENSOR_TFLOPS, TOKENS  # noqa: E402

TENSOR_FP16 = PEAK_FP16_TENSOR_TFLOPS * 1e12   # NVIDIA's figure, dense float16, tensor cores

# (part, label, size keys) -> (chapter, short name, FLOPs per element or a function of the row)
SOFTMAX = {"cols": 4096, "rows": 8192}
LAYERNORM = {"n": 4096}
ATTENTION = {"n": 4096, "d": 64}
QUANT = {"n": 16384, "k": 8192, "batch": 1}
POINTS = [
    ("ch24", "one thread per row (course)", SOFTMAX, "softmax", "thread per row, Numba", 5),
    ("ch24", "one warp per row, online (course)", SOFTMAX, "softmax", "warp per row, Numba", 5),
    ("ch24t", "one program per row, Triton (course)", SOFTMAX, "softmax", "Triton", 5),
    ("ch24", "torch.softmax (PyTorch)", SOFTMAX, "softmax", "PyTorch", 5),
    ("ch25", "LayerNorm, Welford + Chan (course)", LAYERNORM, "LayerNorm", "Welford, Numba", 7),
    ("ch25t", "LayerNorm, Triton (course)", LAYERNORM, "LayerNorm", "Triton", 7),
    ("ch25", "LayerNorm, PyTorch (F.layer_norm)", LAYERNORM, "LayerNorm", "PyTorch", 7),
    ("ch25", "RMSNorm (course)", LAYERNORM, "RMSNorm", "Numba", 4),
    ("ch25", "RMSNorm, PyTorch (F.rms_norm)", LAYERNORM, "RMSNorm", "PyTorch", 4),
    ("ch26", "naive, S in global memory (course)", ATTENTION, "attention", "naive, Numba", None),
    ("ch26", "FlashAttention-style, Numba (course)", ATTENTION, "attention", "flash, Numba", None),
    ("ch26", "FlashAttention-style, Triton (course)", ATTENTION, "attention", "flash, Triton",
     None),
    ("ch26", "PyTorch SDPA, math backend (float32)", ATTENTION, "attention",
     "PyTorch math, float32", None),
    ("ch26", "PyTorch SDPA, flash backend (float16, tensor cores)", ATTENTION, "attention",
     "PyTorch flash", None),
    ("ch27", "int8, Numba (course)", QUANT, "quantized", "int8, Numba", None),
    ("ch27", "int4, Numba (course)", QUANT, "quantized", "int4, Numba", None),
    ("ch27", "int4, Triton (course)", QUANT, "quantized", "int4, Triton", None),
    ("ch27", "float16, Numba (course)", QUANT, "quantized", "float16, Numba", None),
    ("ch27", "float16, PyTorch (cuBLAS)", QUANT, "quantized", "float16, cuBLAS", None),
]
COPY_LABELS = ("copy of the same bytes", "copy of the int8 bytes", "copy of the int4 bytes",
               "copy of the fp16 bytes")


def read_run(run: Path | None, doc: Path | None, key: str | None) -> dict[str, list[dict]]:
    """{part: rows} of one measuring run."""
    if run is not None:
        return {p: json.loads((run / f"measure_{p}.json").read_text())["rows"] for p in PARTS
                if (run / f"measure_{p}.json").exists()}
    data = json.loads(doc.read_text())[key]["track_one_run"]
    return {p: data[p]["rows"] for p in PARTS if p in data}


def _find(rows: list[dict], label: str, size: dict) -> dict | None:
    for r in rows:
        if r.get("label") == label and all(r.get(k) == v for k, v in size.items()):
            return r
    return None


def place(run: dict[str, list[dict]]) -> tuple[list[dict], float]:
    """The points (kernel, FLOPs, bytes, seconds) and the run's memory roof (bytes/s)."""
    # The memory roof: the fastest copy of at least 256 MiB (smaller ones are helped by the L2)
    copies = [r["gbps"] for rows in run.values() for r in rows
              if r.get("label") in COPY_LABELS and r["gbps"] * r["ms"] * 1e6 >= 1 << 28]
    if not copies:
        raise SystemExit("the run has no copy of 256 MiB or more: no memory roof")
    bandwidth = max(copies) * 1e9
    points = []
    for part, label, size, op, name, per_element in POINTS:
        r = _find(run.get(part, []), label, size)
        if r is None or not r.get("right", False):
            print(f"missing or wrong in the run: {part} {label} {size}", file=sys.stderr)
            continue
        seconds = r["ms"] * 1e-3
        if op == "attention":
            n, d = r["n"], r["d"]
            heads = TOKENS // n                     # query rows per run: heads · n
            flops, nbytes = 4.0 * n * n * d * heads, 8.0 * n * d * heads
        elif op == "quantized":
            flops = 2.0 * r["n"] * r["k"] * r["batch"]
            nbytes = r["gbps"] * 1e9 * seconds
        else:
            nbytes = r["gbps"] * 1e9 * seconds
            flops = per_element * nbytes / 8        # 4 bytes in, 4 out per element
        points.append({"op": op, "name": name, "label": label, "size": size, "ms": r["ms"],
                       "flops": flops, "bytes": nbytes, "seconds": seconds})
    return points, bandwidth


def on_tensor_cores(point: dict) -> bool:
    """Attention in Triton (``tl.dot``) and PyTorch's flash backend run on the tensor cores."""
    return point["op"] == "attention" and point["name"] in ("flash, Triton", "PyTorch flash")


def of_roof(point: dict, bandwidth: float, fp32: float) -> float:
    """The point's achieved FLOP/s over the best its roof allows at its intensity."""
    peak = TENSOR_FP16 if on_tensor_cores(point) else fp32
    best = min(peak, point["flops"] / point["bytes"] * bandwidth)
    return point["flops"] / point["seconds"] / best


def table(points: list[dict], bandwidth: float, fp32: float) -> str:
    lines = ["| operation | kernel | size | time | FLOP/byte | achieved | of its roof |",
             "|---|---|---|---|---|---|---|"]
    for p in points:
        i = p["flops"] / p["bytes"]
        peak = TENSOR_FP16 if on_tensor_cores(p) else fp32
        if i * bandwidth < peak:       # under the memory roof: say it in bytes per second
            got = f"{p['bytes'] / p['seconds'] / 1e9:,.0f} GB/s"
        else:
            got = f"{p['flops'] / p['seconds'] / 1e12:,.2f} TFLOP/s"
        frac = of_roof(p, bandwidth, fp32)
        size = " × ".join(f"{v:,}" for v in p["size"].values())
        lines.append(f"| {p['op']} | {p['name']} | {size} | {p['ms']:.3f} ms | {i:,.2f} | {got} "
                     f"| {frac:.0%} |")
    return "\n".join(lines)


def figure(points: list[dict], bandwidth: float, fp32: float, title: str):
    """The roofs, each kernel a numbered marker (colour: the operation; shape: who wrote it), and
    beside them the numbered list with each kernel's fraction of its roof."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig = plt.figure(figsize=(13, 6.4), dpi=110)
    ax = fig.add_axes((0.07, 0.1, 0.55, 0.8))
    x = np.logspace(-1, 4, 400)
    ax.loglog(x, np.minimum(fp32, x * bandwidth), color="black", lw=2,
              label=f"CUDA cores, float32 ({fp32 / 1e12:.0f} TFLOP/s), under the copy "
                    f"({bandwidth / 1e9:,.0f} GB/s)")
    ax.loglog(x, np.minimum(TENSOR_FP16, x * bandwidth), color="gray", lw=1.5, ls="--",
              label=f"tensor cores, dense float16 ({TENSOR_FP16 / 1e12:.0f} TFLOP/s)")
    colors = {"softmax": "tab:blue", "LayerNorm": "tab:orange", "RMSNorm": "tab:olive",
              "attention": "tab:red", "quantized": "tab:green"}

    def marker(name):
        return "s" if "PyTorch" in name or "cuBLAS" in name else ("^" if "Triton" in name else "o")

    lines = []
    for k, p in enumerate(points, 1):
        i, y = p["flops"] / p["bytes"], p["flops"] / p["seconds"]
        ax.scatter([i], [y], s=60, marker=marker(p["name"]), color=colors[p["op"]],
                   edgecolor="black", linewidth=0.6, zorder=3)
        left = k % 2 == 0                       # alternate sides: points of one operation share x
        ax.annotate(str(k), (i, y), textcoords="offset points", xytext=(-9 if left else 6, -3),
                    ha="right" if left else "left", fontsize=7.5, color=colors[p["op"]])
        lines.append((colors[p["op"]], f"{k:2d}  {p['op']}, {p['name']}: "
                                       f"{of_roof(p, bandwidth, fp32):.0%} of its roof"))
    for shape, what in (("o", "the course, Numba"), ("^", "the course, Triton"),
                        ("s", "PyTorch / cuBLAS")):
        ax.scatter([], [], marker=shape, color="white", edgecolor="black", label=what)
    ax.set_xlabel("arithmetic intensity (FLOP per byte: the least a kernel must move)")
    ax.set_ylabel("FLOP/s achieved")
    ax.set_xlim(0.1, 1e4)
    ax.set_ylim(1e10, 2e15)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7.5, loc="upper left")
    side = fig.add_axes((0.64, 0.1, 0.35, 0.8))
    side.axis("off")
    for row, (color, text) in enumerate(lines):
        side.text(0.0, 1 - row / max(len(lines), 20), text, color=color, fontsize=8.5,
                  family="monospace", va="top", transform=side.transAxes)
    return fig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=Path, help="a measuring run's output folder")
    ap.add_argument("--json", type=Path, help="a docs JSON holding the run under --key")
    ap.add_argument("--key", help="the key of the run in --json")
    ap.add_argument("--figure", type=Path, help="where to write the figure (PNG)")
    args = ap.parse_args()
    if (args.run is None) == (args.json is None):
        ap.error("give --run or --json with --key")
    from autograder.learner.visual.roofline import H200
    run = read_run(args.run, args.json, args.key)
    points, bandwidth = place(run)
    fp32 = H200.peak_flops
    print(table(points, bandwidth, fp32))
    if args.figure:
        args.figure.parent.mkdir(parents=True, exist_ok=True)
        fig = figure(points, bandwidth, fp32,
                     "The GPU MODE track's kernels on the NVIDIA H200, one measuring run "
                     "(the course's reference kernels beside PyTorch)")
        fig.savefig(args.figure)
        print(f"wrote {args.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
