"""What chapter 10's notebook calls outside the graded cells: a tree's steps profiled from the
CPU-mode race detector's recording, and the sums timed on a GPU and plotted."""

from __future__ import annotations

import numpy as np

from autograder.machine import device
from autograder.problems.ch10.specs import (MEAN, N_MEASURE, device_warp_size, exact_sum,
                                            grid_stride_chain, magnitude, run_sum, sum_tolerance)


# ---- CPU mode: what each step of a tree does, from the race detector's recording ----------------

def tree_profile(kernel, threads: int, warp: int | None = None, blocks: int = 1,
                 n: int | None = None) -> list[dict]:
    """Launch a shared-memory tree kernel ``kernel[blocks, threads](x, out)`` in CPU mode on
    ``n`` (default 2·threads) values and report, for each barrier interval of block 0 (the load,
    then one tree step per interval): how many threads wrote shared memory (the active threads),
    how many warps had any active thread, how many of those were divergent (some lanes active,
    some not), and the passes the warps' shared-memory accesses took (a bank conflict makes a
    warp's access take several passes; 1 per access is conflict-free). CPU mode only."""
    from numba import cuda
    from autograder.machine.simulator import races
    if device.current().is_gpu:
        raise RuntimeError("tree_profile records the simulator's accesses: run it in CPU mode "
                           "(AAG_BACKEND=cpu)")
    warp = int(warp or device_warp_size())
    n = int(n or 2 * threads)
    x = cuda.to_device(np.ones(n, np.float32))
    out = cuda.to_device(np.zeros(1, np.float32))
    with races.record() as accesses:
        kernel[blocks, threads](x, out)
    steps: dict[int, dict] = {}
    visits: dict[tuple, int] = {}
    by_access: dict[tuple, dict] = {}
    for a in accesses:
        if a.space != "shared" or tuple(a.block)[0] != 0:
            continue
        t = int(a.thread[0])
        row = steps.setdefault(a.interval, {"writers": set(), "readers": set()})
        (row["writers"] if a.kind == "write" else row["readers"]).add(t)
        key = (t, a.line, a.kind, a.interval)
        visit = visits.get(key, 0)
        visits[key] = visit + 1
        word = int(np.ravel_multi_index(a.element, a.shape)) if a.shape else int(a.element[0])
        banks = by_access.setdefault((a.interval, a.line, a.kind, t // warp, visit), {})
        banks.setdefault(word % 32, set()).add(word)
    while len(steps) > 1 and not steps[max(steps)]["writers"]:
        del steps[max(steps)]           # after the last barrier: thread 0 reads the result
    rows = []
    for interval in sorted(steps):
        writers = steps[interval]["writers"]
        per_warp = {}
        for t in writers:
            per_warp[t // warp] = per_warp.get(t // warp, 0) + 1
        accesses_here = [b for k, b in by_access.items() if k[0] == interval]
        passes = [max(len(words) for words in b.values()) for b in accesses_here]
        rows.append({"interval": interval, "active": len(writers),
                     "warps": len(per_warp),
                     "divergent": sum(1 for c in per_warp.values() if c < warp),
                     "accesses": len(passes), "passes": sum(passes),
                     "worst": max(passes) if passes else 0})
    return rows


def profile_table(rows: list[dict], warps_in_block: int) -> str:
    """:func:`tree_profile` rows as a small text table."""
    lines = [f"{'step':>4s} {'active threads':>15s} {'warps busy':>11s} {'of them divergent':>18s}"
             f" {'passes/access':>14s} {'worst':>6s}"]
    for k, r in enumerate(rows):
        ways = r["passes"] / r["accesses"] if r["accesses"] else 0
        name = "load" if k == 0 else str(k)
        lines.append(f"{name:>4s} {r['active']:15d} {r['warps']:5d} of {warps_in_block:<3d}"
                     f" {r['divergent']:18d} {ways:14.2f} {r['worst']:6d}")
    return "\n".join(lines)


# ---- measuring on a GPU (the chapter's "measure it" cells) -----------------------------------------

def measure(kernels: dict, n: int = N_MEASURE, repeats: int = 10, seed: int = 10,
            with_cupy: bool = True) -> list[dict]:
    """Time each sum kernel on n float32 values (2^28 by default: 1 GiB), beside CuPy's sum where
    CuPy is installed; every result is checked against the float64 sum.

    ``kernels`` maps a label to ``(kernel, shape)``, ``shape(n) -> (blocks, threads)``. Rows:
    label, blocks, threads, ms, GB/s (bytes read per second), right (bool), error (relative)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the reductions")
    from numba import cuda
    d_x = cuda.device_array(int(n), np.float32)
    timing.fill_uniform(d_x, seed=seed, low=MEAN - 1.0, high=MEAN + 1.0)
    host = d_x.copy_to_host()
    total, mag = exact_sum(host), magnitude(host)
    d_out = cuda.device_array(1, np.float32)
    rows = []
    for label, (kernel, shape) in kernels.items():
        blocks, threads = shape(n)
        stats = timing.time_gpu(label, lambda i: run_sum(kernel, d_x, d_out, blocks, threads),
                                repeats=repeats, nbytes=4 * int(n))
        got = float(d_out.copy_to_host()[0])
        tol = sum_tolerance(host, grid_stride_chain(n, blocks, threads, device_warp_size()), mag)
        rows.append({"label": label, "blocks": blocks, "threads": threads,
                     "ms": stats.median_ms, "gbps": stats.gbps, "right": abs(got - total) <= tol,
                     "error": abs(got - total) / abs(total)})
    if with_cupy:
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            c_x = cp.asarray(d_x)
            got = {}

            def run(i):
                got["sum"] = cp.sum(c_x)
            stats = timing.time_gpu("cupy.sum", run, repeats=repeats, nbytes=4 * int(n))
            value = float(got["sum"])
            rows.append({"label": "cupy.sum", "blocks": 0, "threads": 0, "ms": stats.median_ms,
                         "gbps": stats.gbps, "right": abs(value - total) <= 1e-4 * abs(total),
                         "error": abs(value - total) / abs(total)})
    return rows


def plot_measurements(rows: list[dict], ceiling_gbps: float | None = None, title: str = ""):
    """Two panels: GB/s of each kernel (with the copy ceiling), and the speedup of each step over
    the first kernel."""
    import matplotlib.pyplot as plt
    labels = [r["label"] for r in rows]
    gbps = np.array([r["gbps"] for r in rows])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.45 * len(rows) + 1.8), sharey=True)
    y = np.arange(len(rows))
    left.barh(y, gbps, color=["#3b6ea8" if r["label"] != "cupy.sum" else "#888" for r in rows])
    if ceiling_gbps:
        left.axvline(ceiling_gbps, color="black", ls="--", lw=1,
                     label=f"copy: {ceiling_gbps:.0f} GB/s")
        left.legend(fontsize=8, loc="lower right")
    left.set_yticks(y, labels, fontsize=8)
    left.invert_yaxis()
    left.set_xlabel("GB/s read")
    speedup = gbps / gbps[0]
    right.barh(y, speedup, color="#e07b39")
    for k, s in enumerate(speedup):
        right.text(s, k, f" {s:.1f}×", va="center", fontsize=8)
    right.set_xlabel(f"speedup over “{labels[0]}”")
    fig.suptitle(title or "Sums of 2^28 float32 values")
    fig.tight_layout()
    return fig
