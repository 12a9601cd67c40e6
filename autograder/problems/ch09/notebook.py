"""What chapter 9's "measure it" cells call: timing histogram kernels on each kind of content
(on a GPU) and plotting the result."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch09.references import NUM_BINS
from autograder.problems.ch09.specs import KINDS, byte_counts, make_bytes, run_histogram


def measure(kernels: dict, n: int = 1 << 28, kinds=KINDS, repeats: int = 10,
            seed: int = 9) -> list[dict]:
    """Time each histogram kernel on n bytes of each kind of content, beside CuPy's bincount
    (where CuPy is installed); every result is checked against the spec.

    ``kernels`` maps a label to ``(kernel, shape)``, ``shape(n) -> (blocks, threads)``. Rows:
    kind, label, ms, GB/s (bytes read per second), right (bool), hot fraction of the input."""
    from autograder.machine import timing
    timing.require_gpu("Timing the histograms")
    from numba import cuda
    try:
        import cupy as cp
    except ImportError:
        cp = None
    d_hist = cuda.device_array(NUM_BINS, np.uint32)
    rows = []
    for kind in kinds:
        host = make_bytes(kind, n, seed)
        expected = byte_counts(host)
        hot = float(expected.max() / n)
        d_data = cuda.to_device(host)
        for label, (kernel, shape) in kernels.items():
            blocks, threads = shape(n)
            stats = timing.time_gpu(label, lambda i: run_histogram(kernel, d_data, d_hist, blocks,
                                                                    threads),
                                    repeats=repeats, nbytes=n)
            right = bool(np.array_equal(d_hist.copy_to_host().astype(np.int64), expected))
            rows.append({"kind": kind, "label": label, "ms": stats.median_ms, "gbps": stats.gbps,
                         "right": right, "hot_fraction": hot})
        if cp is not None:
            c_data = cp.asarray(d_data)
            out = {}

            def bincount(i):
                out["hist"] = cp.bincount(c_data, minlength=NUM_BINS)
            stats = timing.time_gpu("cupy.bincount", bincount, repeats=repeats, nbytes=n)
            right = bool(np.array_equal(cp.asnumpy(out["hist"]).astype(np.int64), expected))
            rows.append({"kind": kind, "label": "cupy.bincount", "ms": stats.median_ms,
                         "gbps": stats.gbps, "right": right, "hot_fraction": hot})
    return rows


def plot_measurements(rows: list[dict], ceiling_gbps: float | None = None, title: str = ""):
    """Grouped bars: GB/s of each kernel on each kind of content (log scale), with the copy
    ceiling as a line."""
    import matplotlib.pyplot as plt
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    labels = list(dict.fromkeys(r["label"] for r in rows))
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(len(labels), 1)
    for j, label in enumerate(labels):
        values = [next((r["gbps"] for r in rows if r["kind"] == k and r["label"] == label), 0)
                  for k in kinds]
        ax.bar(np.arange(len(kinds)) + j * width, values, width, label=label)
    if ceiling_gbps:
        ax.axhline(ceiling_gbps, color="black", ls="--", lw=1,
                   label=f"copy ceiling {ceiling_gbps:.0f} GB/s")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(kinds)) + 0.4 - width / 2)
    short = {"uniform": "uniform values", "text": "text", "image": "photo-like image",
             "page": "scanned page"}
    ax.set_xticklabels([short.get(k, k) for k in kinds], fontsize=9)
    ax.set_ylabel("GB/s of input read")
    ax.set_title(title or "Histogram throughput by input")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
