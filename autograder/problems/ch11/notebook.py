"""What chapter 11's notebook calls outside the graded cells: the pictures of the scan networks,
and the "measure it" cells (runners for the learner's kernels, the timings beside ``cupy.cumsum``
and a copy, their plot)."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.problems.ch11.references import COARSEN
from autograder.problems.ch11.specs import (SPEED_N, SPEED_THREADS, chain_bound, network,
                                            sampled_scan, scan_any_length, scan_bytes,
                                            scan_sections, scan_speed_inputs, single_pass_scan)


# ---- the networks' pictures ----------------------------------------------------------------------

def plot_network(ax, kind: str, n: int = 16, title: str = ""):
    """Draw a scan network: one column per element, one row per step (time runs down); a line
    from element src to element dst where ``xy[dst] += xy[src]``, a dot where an addition
    happens, gray where a value only passes through."""
    steps = network(kind, n)
    for s, step in enumerate(steps):
        busy = {d for d, _ in step}
        for i in range(n):
            if i not in busy:
                ax.plot([i, i], [s, s + 1], color="#cccccc", lw=1, zorder=1)
        for d, src in step:
            ax.plot([d, d], [s, s + 1], color="#3b6ea8", lw=1.2, zorder=2)
            ax.plot([src, d], [s, s + 1], color="#e07b39", lw=1.2, zorder=2)
            ax.scatter([d], [s + 1], s=18, color="#b5485d", zorder=3)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(len(steps) + 0.3, -0.3)
    ax.set_xticks(range(n))
    ax.set_xticklabels([str(i) for i in range(n)], fontsize=7)
    ax.set_yticks(range(len(steps) + 1))
    ax.set_yticklabels(["load"] + [f"step {s + 1}" for s in range(len(steps))], fontsize=8)
    adds = sum(len(step) for step in steps)
    ax.set_title(title or f"{kind}: {len(steps)} steps, {adds} additions", fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


# ---- measuring on a GPU (the chapter's "measure it" cells) ----------------------------------------

def sections_runner(kernel, threads: int, per_thread: int):
    """run(x, y) for a section scan (11.1: per_thread 1, 11.2: 2), and its section length."""
    return (lambda x, y: scan_sections(kernel, x, y, threads, per_thread)), per_thread * threads


def hierarchical_runner(kernels, threads: int = SPEED_THREADS):
    return (lambda x, y: scan_any_length(kernels, x, y, threads)), None


def single_pass_runner(kernel, threads: int = SPEED_THREADS):
    return (lambda x, y: single_pass_scan(kernel, x, y, threads)), None


def measure(runners: dict, n: int = SPEED_N, repeats: int = 10, seed: int = 11) -> list[dict]:
    """Time each scan on n float32, beside ``cupy.cumsum`` (if CuPy is installed) and a copy of
    the same bytes. ``runners`` maps a label to ``(run, section)`` (see :func:`sections_runner`,
    :func:`hierarchical_runner`, :func:`single_pass_runner`); ``section`` None for a whole scan.
    Every result is checked at 4096 sampled elements. Rows: label, ms, GB/s (8 bytes per
    element: read once, written once), fraction of the copy, right, section."""
    from autograder.machine import timing
    timing.require_gpu("Timing the scans")
    from numba import cuda
    host = scan_speed_inputs(np.random.default_rng(seed), n)["x"]
    d_x = cuda.to_device(host)
    d_y = cuda.device_array(n, np.float32)
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(n, size=min(4096, n), replace=False))
    threads_of = SPEED_THREADS

    def right(values, section):
        exp, mag = sampled_scan(host, idx, section)
        if section:
            tol = gamma(idx % section) * mag + TINY32
        else:
            tol = gamma(chain_bound(idx, COARSEN * threads_of, threads_of)) * mag + TINY32
        return bool(np.all(np.abs(values[idx].astype(np.float64) - exp) <= tol))

    rows = []
    for label, (run, section) in runners.items():
        stats = timing.time_gpu(label, lambda i, run=run: run(d_x, d_y), repeats=repeats,
                                nbytes=scan_bytes(n))
        rows.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": right(d_y.copy_to_host(), section), "section": section})
    try:
        import cupy as cp
        c_x, c_y = cp.asarray(d_x), cp.asarray(d_y)
        stats = timing.time_gpu("cupy.cumsum", lambda i: cp.cumsum(c_x, out=c_y),
                                repeats=repeats, nbytes=scan_bytes(n))
        rows.append({"label": "cupy.cumsum", "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": right(cp.asnumpy(c_y), None), "section": None})
    except ImportError:
        pass
    ceiling = timing.copy_ceiling(scan_bytes(n))
    for row in rows:
        row["of_copy"] = ceiling.median_ms / row["ms"]
    rows.append({"label": ceiling.label, "ms": ceiling.median_ms, "gbps": ceiling.gbps,
                 "right": True, "of_copy": 1.0, "section": None})
    return rows


def plot_measurements(rows: list[dict], title: str = ""):
    """Horizontal bars: GB/s of each scan, the copy's as a line."""
    import matplotlib.pyplot as plt
    copy = next((r for r in rows if r["label"].startswith("copy")), None)
    bars = [r for r in rows if r is not copy]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(bars) + 1.2))
    colours = ["#9aa9bb" if r["section"] else "#3b6ea8" for r in bars]
    ax.barh(range(len(bars)), [r["gbps"] for r in bars], color=colours)
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels([r["label"] + ("" if r["right"] else "  (WRONG)") for r in bars],
                       fontsize=8)
    ax.invert_yaxis()
    if copy:
        ax.axvline(copy["gbps"], color="black", ls="--", lw=1,
                   label=f"copy of the same bytes: {copy['gbps']:.0f} GB/s")
        ax.legend(fontsize=8, loc="lower right")
    ax.set_xlabel("GB/s (8 bytes per element: read once, written once); gray: sections only")
    ax.set_title(title or "Scans of 2^28 float32")
    ax.grid(True, axis="x", alpha=0.3)
    return fig
