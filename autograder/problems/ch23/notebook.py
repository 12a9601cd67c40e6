"""What chapter 23's notebook calls outside the graded cells: the map of the course and of what
comes after it, a picture of the banks a warp's shared-memory access falls into, and the course's
reference kernels as measured on an H200, each set against its own roof."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from autograder.problems.ch23.specs import BANKS, WARP, bank_ways

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "h200_reference_kernels.json"

# The course as a map: (row, column, label, what it gave). Rows are the stages; the last row is
# what follows the book.
STAGES = (
    ("Foundations, ch. 1–6", ("1 threads", "2 data parallel", "3 grids", "4 warps, occupancy",
                              "5 tiling", "6 coalescing, banks")),
    ("Parallel patterns, ch. 7–12", ("7 convolution", "8 stencil", "9 histogram", "10 reduction",
                                     "11 scan", "12 merge")),
    ("Applications, ch. 13–19", ("13 sort", "14 SpMV", "15 BFS", "16 conv layer", "17 MRI",
                                 "18 potential", "19 N-body")),
    ("Practice, ch. 20–22", ("20 MPI ranks", "21 work queues", "22 streams, launches")),
    ("Onward", ("softmax", "layernorm", "attention", "quantized matmul", "Triton",
                "multi-GPU, NCCL")),
)
# What each stage leans on most (arrows drawn from the earlier stage's chapter to the later one).
LEANS_ON = (("5 tiling", "16 conv layer"), ("11 scan", "13 sort"), ("9 histogram", "14 SpMV"),
            ("10 reduction", "softmax"), ("5 tiling", "attention"), ("10 reduction", "layernorm"),
            ("6 coalescing, banks", "quantized matmul"), ("8 stencil", "20 MPI ranks"),
            ("22 streams, launches", "multi-GPU, NCCL"), ("11 scan", "21 work queues"))


def _figure(width: float, height: float):
    import matplotlib.pyplot as plt
    return plt.subplots(figsize=(width, height))


def course_map():
    """The chapters as five rows of boxes, with the ideas later work leans on drawn as arrows;
    returns the figure (its text: :func:`course_map_text`)."""
    fig, ax = _figure(12.0, 5.2)
    where: dict[str, tuple[float, float]] = {}
    colours = ("#3b6ea8", "#4c9a5b", "#e07b39", "#7d5ba6", "#b5433f")
    for row, ((stage, boxes), colour) in enumerate(zip(STAGES, colours)):
        y = len(STAGES) - 1 - row
        ax.text(-0.6, y, stage, ha="right", va="center", fontsize=9, color=colour,
                fontweight="bold")
        for col, label in enumerate(boxes):
            x = col * 1.8
            where[label] = (x, y)
            ax.text(x, y, label, ha="center", va="center", fontsize=8,
                    bbox={"boxstyle": "round,pad=0.35", "fc": "white", "ec": colour,
                          "lw": 1.4 if row < len(STAGES) - 1 else 2.0,
                          "ls": "-" if row < len(STAGES) - 1 else "--"})
    for a, b in LEANS_ON:
        (xa, ya), (xb, yb) = where[a], where[b]
        ax.annotate("", (xb, yb + 0.22), (xa, ya - 0.22),
                    arrowprops={"arrowstyle": "->", "color": "grey", "lw": 0.8, "alpha": 0.7,
                                "connectionstyle": "arc3,rad=0.08"})
    ax.set_xlim(-4.6, 6 * 1.8 + 1.0)
    ax.set_ylim(-0.6, len(STAGES) - 0.4)
    ax.axis("off")
    ax.set_title("The course, and where its ideas are used again (arrows: what a later "
                 "chapter leans on)", fontsize=10)
    fig.tight_layout()
    return fig


def course_map_text() -> str:
    return "\n".join(f"{stage}: {', '.join(boxes)}" for stage, boxes in STAGES)


def show_banks(width: int, x_step: int, y_step: int, title: str = ""):
    """The 32 threads of one warp (thread t is (t % width, t // width)) reading word
    tx·x_step + ty·y_step: one column per bank, one square per distinct word asked of it,
    labelled with the threads that read it. The tallest column is the conflict's ways. Prints
    what it shows in a line; returns the figure."""
    words: dict[int, list[int]] = {}
    for t in range(WARP):
        w = (t % width) * x_step + (t // width) * y_step
        words.setdefault(w, []).append(t)
    per_bank: dict[int, list[int]] = {}
    for w in sorted(words):
        per_bank.setdefault(w % BANKS, []).append(w)
    ways = bank_ways(width, x_step, y_step)
    fig, ax = _figure(10.0, 1.2 + 0.38 * max(ways, 2))
    for bank, ws in per_bank.items():
        for level, w in enumerate(ws):
            threads = words[w]
            colour = "#b5433f" if len(ws) > 1 else "#4c9a5b"
            ax.add_patch(_square(bank, level, colour))
            label = (f"t{threads[0]}" if len(threads) == 1 else
                     f"t{threads[0]}+{len(threads) - 1}")
            ax.text(bank + 0.5, level + 0.5, label, ha="center", va="center", fontsize=6,
                    color="white")
    ax.set_xlim(0, BANKS)
    ax.set_ylim(0, max(ways, 1) + 0.2)
    ax.set_xticks(np.arange(BANKS) + 0.5)
    ax.set_xticklabels([str(b) for b in range(BANKS)], fontsize=6)
    ax.set_yticks([])
    ax.set_xlabel("bank (word address % 32); a square is one distinct word, labelled with the "
                  "threads that read it (t5+3: thread 5 and three more, a broadcast)", fontsize=8)
    verdict = "no conflict" if ways == 1 else f"{ways}-way conflict: {ways} passes"
    ax.set_title(title or f"width {width}, word = tx·{x_step} + ty·{y_step}: {verdict}",
                 fontsize=9)
    fig.tight_layout()
    print(f"{len(words)} distinct words over {len(per_bank)} banks; the busiest bank is asked "
          f"for {ways} distinct word{'s' * (ways != 1)}: {verdict}")
    return fig


def _square(bank, level, colour):
    from matplotlib.patches import Rectangle
    return Rectangle((bank + 0.06, level + 0.06), 0.88, 0.88, color=colour)


def reference_kernels() -> list[dict]:
    """The course's reference kernels of chapters 2–12 as measured on the H200, each with its
    roof: the larger of its FLOPs at the FP32 peak and a copy of its bytes timed in the same run;
    ``fraction`` is roof / measured."""
    data = json.loads(KERNELS.read_text())
    peak = float(data["peak_fp32_flops"])
    rows = []
    for k in data["kernels"]:
        compute_ms = k["flops"] / peak * 1e3
        roof_ms = max(compute_ms, k["copy_ms"])
        rows.append({"problem": k["problem"], "title": k["title"], "ms": k["reference_ms"],
                     "roof_ms": roof_ms, "bound": "compute" if compute_ms > k["copy_ms"]
                     else "memory", "fraction": roof_ms / k["reference_ms"]})
    return rows


def show_reference_kernels():
    """A bar per reference kernel: the share of its roof it reaches on the H200, coloured by the
    roof that binds it; returns the figure (the numbers: :func:`reference_kernels`)."""
    rows = sorted(reference_kernels(), key=lambda r: r["fraction"])
    fig, ax = _figure(8.5, 0.3 * len(rows) + 1.4)
    colour = {"memory": "#3b6ea8", "compute": "#e07b39"}
    y = np.arange(len(rows))
    ax.barh(y, [100 * r["fraction"] for r in rows], color=[colour[r["bound"]] for r in rows])
    ax.set_yticks(y)
    ax.set_yticklabels([r["problem"] for r in rows], fontsize=8)
    for i, r in enumerate(rows):
        ax.text(100 * r["fraction"] + 1, i, f"{100 * r['fraction']:.0f}%  ({r['ms']:.3g} ms, "
                f"roof {r['roof_ms']:.3g} ms)", va="center", fontsize=7)
    ax.set_xlim(0, 135)
    ax.set_xlabel("share of the roof reached (roof time / measured time), NVIDIA H200")
    ax.set_title("The course's reference kernels against their roofs (blue: memory bound, "
                 "orange: compute bound)", fontsize=9)
    fig.tight_layout()
    return fig
