"""What chapter 20's notebook calls outside the graded cells: ``run_ranks`` (a per-rank function
on N ranks, from the notebook), a picture of the slabs and their ghost planes, the exchange's
bytes against the slab's, and the "measure it" cell (the blocking and the overlapped step on a
GPU shared by the ranks, with each rank's timeline of exchange and compute)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch20 import ranks as _ranks
from autograder.problems.ch20.drivers import TIMED
from autograder.problems.ch20.specs import (SPEED_GRID, SPEED_RANKS, coefficients, slabs_of,
                                            split_planes)


def run_ranks(fn, ranks: int = 2, grid=None, *, timeout: float = 30.0, seed: int = 20) -> list:
    """Run ``fn(comm, slab)`` on ``ranks`` MPI ranks (``mpiexec``, one process each), every rank
    with its own slab of ``grid`` (a float32 ``(nz, ny, nx)`` array; a small random one by
    default) split along z, ghost planes NaN. Returns, in rank order, ``(slab, returned)``: the
    rank's slab as ``fn`` left it and what ``fn`` returned (as an array). A rank that raises
    raises :class:`RankFailed` here (which rank, its traceback); ranks still running after
    ``timeout`` seconds are stopped and :class:`RankHung` says where each one waited."""
    if grid is None:
        grid = np.random.default_rng(seed).uniform(-1, 1, (2 * ranks + 1, 4, 5)).astype(np.float32)
    grid = np.asarray(grid, np.float32)
    per_rank = [{"slab": s} for s in slabs_of(grid, ranks)]
    got = _ranks.launch(fn, "user", per_rank, timeout=timeout)
    return [(g["slab"], g["returned"]) for g in got]


def exchange_bytes(grid_shape, ranks: int, itemsize: int = 4) -> dict:
    """What one step moves between ranks against what it computes: per rank, the bytes it sends
    (one ny × nx plane to each neighbour) and the bytes of its own planes; in total, the bytes
    sent by all ranks, and their fraction of the grid's bytes (the surface against the volume)."""
    nz, ny, nx = grid_shape
    plane = ny * nx * itemsize
    rows = []
    for r, (z0, z1) in enumerate(split_planes(nz, ranks)):
        neighbours = (r > 0) + (r < ranks - 1)
        rows.append({"rank": r, "planes": z1 - z0, "sent": neighbours * plane,
                     "slab": (z1 - z0) * plane})
    sent = sum(r["sent"] for r in rows)
    return {"per_rank": rows, "sent": sent, "grid": nz * plane, "fraction": sent / (nz * plane)}


def show_slabs(nz: int = 10, ranks: int = 3, ax=None):
    """The z planes of a grid split over ranks: each rank's own planes (one colour per rank) and
    its ghost planes (hatched: copies of the neighbours' nearest planes), with the messages of a
    halo exchange as arrows."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.2))
    colours = plt.get_cmap("tab10")
    bounds = split_planes(nz, ranks)
    for r, (z0, z1) in enumerate(bounds):
        x = r * 1.6
        ax.text(x + 0.5, -1.6, f"rank {r}\nplanes {z0}..{z1 - 1}", ha="center", fontsize=8)
        for k, z in enumerate(range(z0 - 1, z1 + 1)):
            ghost = k == 0 or z == z1
            if ghost and not 0 <= z < nz:
                continue
            ax.add_patch(Rectangle((x, z), 1, 0.9, facecolor=colours(r if not ghost else
                                   (r - 1 if k == 0 else r + 1)), alpha=0.35 if ghost else 0.9,
                                   hatch="///" if ghost else None, edgecolor="k", lw=0.5))
            ax.text(x + 0.5, z + 0.45, f"z{z}" + (" (ghost)" if ghost else ""), ha="center",
                    va="center", fontsize=7)
        if r > 0:
            ax.annotate("", xy=(x, z0 - 0.55), xytext=(x - 0.6, z0 - 0.55),
                        arrowprops=dict(arrowstyle="->", color="k"))
            ax.annotate("", xy=(x - 0.6, z0 + 0.45), xytext=(x, z0 + 0.45),
                        arrowprops=dict(arrowstyle="->", color="k"))
    ax.set_xlim(-0.3, ranks * 1.6)
    ax.set_ylim(-2.2, nz + 1)
    ax.invert_yaxis()
    ax.axis("off")
    ax.set_title(f"{nz} planes over {ranks} ranks: own planes solid, ghost planes hatched "
                 "(arrows: one halo exchange)", fontsize=9)
    return ax


# ---- measuring (GPU) ------------------------------------------------------------------------------

def measure(steps: dict | None = None, ranks: int = SPEED_RANKS, grid=SPEED_GRID,
            repeats: int = 20, warmup: int = 3, seed: int = 20) -> list[dict]:
    """Time one stencil step on ``ranks`` ranks sharing this GPU, a ``grid`` (z, y, x) split along
    z: the course's blocking step (compute, then exchange) and its overlapped step, beside
    ``steps`` ({label: a step function with 20.3's contract}). Each call lasts as long as its
    slowest rank (the ranks start together at a barrier); a row's ms is the median of
    ``repeats`` calls after ``warmup``. Rows: label, ms, right (every call's planes checked
    against the float64 stencil), exchange_bytes (what all ranks send in a step), timeline
    (per rank, the last call's spans: (what, start ms, end ms), MPI calls and stencil kernels)."""
    from autograder.machine import timing
    from autograder.problems.ch20.references import (reference_step_blocking,
                                                     reference_step_overlap)
    timing.require_gpu("Timing the distributed stencil step")
    rng = np.random.default_rng(seed)
    data = rng.random(tuple(grid), dtype=np.float32) - np.float32(0.5)
    c = coefficients(rng)
    per_rank = [{"slab": s, "c": c} for s in slabs_of(data, ranks, True)]
    del data
    fns = {"blocking step: compute, then exchange (course)": reference_step_blocking,
           "overlapped step: boundary first, exchange during the interior (course)":
               reference_step_overlap, **(steps or {})}
    got = _ranks.launch(fns, TIMED, per_rank, timeout=600.0,
                        options={"warmup": warmup, "repeats": repeats})
    sent = exchange_bytes(tuple(grid), ranks)["sent"]
    rows = []
    for index, label in enumerate(fns):
        spans = [[(str(n), float(a), float(b)) for n, (a, b) in
                  zip(g[f"span_names_{index}"], g[f"span_times_{index}"]) if str(n)] for g in got]
        rows.append({"label": label, "ms": float(np.median(got[0][f"ms_{index}"])),
                     "right": bool(all(np.all(g[f"right_{index}"]) for g in got)),
                     "exchange_bytes": sent, "grid": list(grid), "ranks": ranks,
                     "timeline": spans})
    return rows


CHART = "ch20_measure"      # the measuring cell's recorded picture: h200_ch20_measure.json here


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): each step's time.
    Without a GPU, ``chart()`` names the course's own run, recorded on the H200
    (``h200_ch20_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    return {"name": CHART, "rows": [{k: r[k] for k in ("label", "ms", "right")} for r in rows],
            "title": f"One stencil step of a "
                     f"{' × '.join(map(str, rows[0].get('grid', SPEED_GRID)))} grid on "
                     f"{rows[0].get('ranks', SPEED_RANKS)} ranks sharing one GPU"}


def timeline(rows: list[dict], ax=None):
    """Each rank's last call of each step as a timeline: MPI calls (the exchange) and stencil
    kernels (the compute) as bars, one line per rank and step. In the overlapped step the
    messages sit under the interior's kernel; in the blocking one they follow it."""
    import matplotlib.pyplot as plt
    rows = [r for r in rows if r.get("timeline")]
    lines = [(r["label"].split(":")[0], rank, spans) for r in rows
             for rank, spans in enumerate(r["timeline"])]
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.45 * len(lines) + 1.2))
    colour = {"kernel": "tab:blue"}
    for y, (label, rank, spans) in enumerate(lines):
        for name, a, b in spans:
            ax.broken_barh([(a, max(b - a, 1e-3))], (y - 0.35, 0.7),
                           color=colour.get(name, "tab:orange"), alpha=0.8)
    ax.set_yticks(range(len(lines)))
    ax.set_yticklabels([f"{label}, rank {rank}" for label, rank, _ in lines], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ms from the call's start (GPU kernels from CUDA events; MPI calls from the host)")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color="tab:blue", label="stencil kernel (compute)"),
                       Patch(color="tab:orange", label="MPI call (exchange)")], fontsize=8,
              loc="lower right")
    ax.set_title("Each rank's timeline of one step", fontsize=9)
    return ax
