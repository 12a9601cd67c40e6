"""What chapter 15's notebook calls outside the graded cells: a small graph drawn with its BFS
levels, the work of each level counted both ways (push and pull) on an R-MAT graph and on a grid,
the CPU baselines timed, and the "measure it" cell (the BFS kernels timed on a GPU, in traversed
edges per second)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch15.references import (bfs_by_edges, bfs_by_levels, bfs_frontier,
                                                 bfs_levels, edge_list, work_per_level)
from autograder.problems.ch15.specs import (BASELINES, SPEED_SIZE, bfs_bytes, speed_graph,
                                            traversed_edges)


# ---- pictures -------------------------------------------------------------------------------------

def plot_graph(row_ptr, col, source: int, ax=None, columns: int | None = None):
    """A small graph, its vertices coloured by BFS level (grey: unreachable), the source circled.
    Vertices sit on a grid of ``columns`` columns (the grid graphs' own layout), else on a
    circle. Returns the levels."""
    import matplotlib.pyplot as plt
    n = len(row_ptr) - 1
    levels = bfs_levels(row_ptr, col, source)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    if columns:
        xy = np.stack([np.arange(n) % columns, -(np.arange(n) // columns)], axis=1).astype(float)
    else:
        angle = 2 * np.pi * np.arange(n) / max(1, n)
        xy = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    for v in range(n):
        for e in range(int(row_ptr[v]), int(row_ptr[v + 1])):
            u = int(col[e])
            if u != v:
                ax.annotate("", xy=xy[u], xytext=xy[v],
                            arrowprops=dict(arrowstyle="->", color="#bbbbbb", lw=0.6,
                                            shrinkA=7, shrinkB=7))
    cmap = plt.get_cmap("viridis")
    top = max(1, int(levels.max()))
    for v in range(n):
        colour = "#dddddd" if levels[v] < 0 else cmap(levels[v] / top)
        ax.scatter(*xy[v], s=260, color=colour, edgecolor="black" if v == source else "none",
                   lw=2, zorder=3)
        ax.text(*xy[v], "–" if levels[v] < 0 else str(int(levels[v])), ha="center",
                va="center", fontsize=7, zorder=4,
                color="white" if 0 <= levels[v] < top / 2 else "black")
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"{n} vertices, {len(col)} edges: BFS levels from vertex {source} "
                 "(– unreachable)", fontsize=9)
    return levels


def plot_work(graphs: dict, axes=None):
    """For each graph ({label: (row_ptr, col, source)}), the edges a push step and a pull step
    examine at each level (log scale), with the frontier's size. Returns {label: rows}."""
    import matplotlib.pyplot as plt
    if axes is None:
        _, axes = plt.subplots(1, len(graphs), figsize=(5.5 * len(graphs), 3.4))
    axes = np.atleast_1d(axes)
    found = {}
    for ax, (label, (row_ptr, col, source)) in zip(axes, graphs.items()):
        rows = work_per_level(row_ptr, col, source)
        found[label] = rows
        lv = [r["level"] for r in rows]
        ax.plot(lv, [max(1, r["push_edges"]) for r in rows], "o-", label="push: edges examined")
        ax.plot(lv, [max(1, r["pull_edges"]) for r in rows], "s-", label="pull: edges examined")
        ax.plot(lv, [max(1, r["frontier"]) for r in rows], ":", color="grey",
                label="vertices in the frontier")
        ax.set_yscale("log")
        ax.set_xlabel("level")
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7)
    plt.tight_layout()
    return found


KINDS = ("push", "pull", "edge", "frontier", "private")    # what measure() runs


# ---- measuring ----------------------------------------------------------------------------------

def time_cpu_bfs(n: int, seed: int = 3) -> list[dict]:
    """The CPU baselines on an R-MAT graph of n = 2^k vertices, 16 edges each: label, ms, edges
    traversed, MTEPS (millions of traversed edges per second), right (bool)."""
    from autograder.machine import timing
    graph = speed_graph(np.random.default_rng(seed), n)
    expected = bfs_levels(graph["row_ptr"], graph["col"], graph["source"])
    edges = traversed_edges(graph["row_ptr"], graph["col"], expected)
    levels = np.empty(n, np.int32)
    rows = []
    for key in ("serial", "numpy"):
        base = BASELINES[key]
        stats = timing.time_cpu(base.label, lambda: base.run(levels=levels, **graph), repeats=3,
                                nbytes=bfs_bytes(n))
        rows.append({"label": base.label, "ms": stats.median_ms, "edges": edges,
                     "mteps": edges / stats.median_ms / 1e3,
                     "right": bool(np.array_equal(levels, expected))})
    return rows


def measure(kernels: dict, n: int = SPEED_SIZE, repeats: int = 5, seed: int = 13) -> list[dict]:
    """Time each BFS on an R-MAT graph of n = 2^k vertices (16 edges each), from a hub, 256
    threads a block. ``kernels`` maps a label to (kind, kernel) with kind "push", "pull" (the
    kernel gets the transposed graph), "edge" (the graph as an edge list, one thread per edge),
    "frontier" or "private" (a frontier kernel, privatized or not: the same loop). Rows: label, ms, launches, GTEPS (traversed
    edges per second, Graph500's count), GB/s (the graph read once and the levels written once:
    the least a BFS moves), right (bool)."""
    from autograder.machine import timing
    from autograder.problems.ch15.references import transpose
    for label, (kind, _) in kernels.items():
        if kind not in KINDS:
            raise ValueError(f"{label}: kind {kind!r} is not one of {', '.join(KINDS)}")
    timing.require_gpu("Timing the BFS kernels")
    from numba import cuda as numba_cuda
    graph = speed_graph(np.random.default_rng(seed), n)
    expected = bfs_levels(graph["row_ptr"], graph["col"], graph["source"])
    edges = traversed_edges(graph["row_ptr"], graph["col"], expected)
    d_ptr, d_col = numba_cuda.to_device(graph["row_ptr"]), numba_cuda.to_device(graph["col"])
    d_in = d_edges = None
    d_levels = numba_cuda.device_array(n, np.int32)
    rows = []
    for label, (kind, kernel) in kernels.items():
        if kind == "pull" and d_in is None:
            in_ptr, in_col = transpose(graph["row_ptr"], graph["col"])
            d_in = (numba_cuda.to_device(in_ptr), numba_cuda.to_device(in_col))
        if kind == "edge" and d_edges is None:
            d_edges = tuple(numba_cuda.to_device(a) for a in edge_list(graph["row_ptr"],
                                                                       graph["col"]))
        launches = []

        def run(i, kind=kind, kernel=kernel):
            if kind in ("frontier", "private"):
                launches.append(bfs_frontier(kernel, d_ptr, d_col, d_levels, graph["source"]))
            elif kind == "edge":
                launches.append(bfs_by_edges(kernel, *d_edges, d_levels, graph["source"]))
            else:
                ptr, col = (d_ptr, d_col) if kind == "push" else d_in
                launches.append(bfs_by_levels(kernel, ptr, col, d_levels, graph["source"]))
        stats = timing.time_gpu(label, run, repeats=repeats, nbytes=bfs_bytes(n))
        rows.append({"label": label, "ms": stats.median_ms, "launches": launches[-1],
                     "gteps": edges / stats.median_ms / 1e6, "gbps": stats.gbps,
                     "right": bool(np.array_equal(d_levels.copy_to_host(), expected))})
    return rows


CHART = "ch15_measure"      # the measuring cell's recorded picture: h200_ch15_measure.json here


def chart(rows: list[dict] | None = None, copy_ms: float | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): each search of
    :func:`measure` as a bar, and (``copy_ms``) a copy of the least bytes a BFS moves as a line.
    Without a GPU, ``chart()`` names the course's own run of it instead, recorded on the H200
    (``h200_ch15_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    return {"name": CHART, "rows": rows,
            "reference": ("copy of the least bytes a BFS moves", copy_ms) if copy_ms else None,
            "title": f"BFS of an R-MAT graph, {SPEED_SIZE:,} vertices, 16 edges each"}
