"""Guided experiments that measure rather than grade (the chapters call these)."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np

from . import device, timing


def copy_cost(launcher, sizes=None, repeats: int = 10) -> list[dict]:
    """Time vector addition three ways per size: kernel only (data already on the GPU), with the
    copies a one-off call needs (x and y in, out back), and NumPy on the CPU."""
    timing.require_gpu("The copy-cost experiment")
    from numba import cuda
    sizes = sizes or [1 << k for k in range(10, 29, 2)]
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        out = np.empty_like(x)
        dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.device_array_like(x)
        kernel = timing.time_gpu("kernel only", lambda i: launcher(dx, dy, dout), repeats=repeats)

        def with_copies(i):
            a, b, c = cuda.to_device(x), cuda.to_device(y), cuda.device_array_like(x)
            launcher(a, b, c)
            c.copy_to_host(out)
        copies = timing.time_gpu("with copies", with_copies, repeats=repeats)
        cpu = timing.time_cpu("NumPy", lambda: np.add(x, y, out=out), repeats=repeats)
        rows.append({"n": n, "kernel_ms": kernel.median_ms, "with_copies_ms": copies.median_ms,
                     "numpy_ms": cpu.median_ms})
    return rows


def recorded(name: str) -> dict:
    """Results the course measured on its reference GPU (shipped with the package)."""
    return json.loads(resources.files("autograder.data").joinpath(f"{name}.json").read_text())


def plot_copy_cost(rows: list[dict], title: str = ""):
    import matplotlib.pyplot as plt
    n = [r["n"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.loglog(n, [r["kernel_ms"] for r in rows], "o-", label="GPU kernel only")
    ax.loglog(n, [r["with_copies_ms"] for r in rows], "s-", label="GPU with host↔device copies")
    ax.loglog(n, [r["numpy_ms"] for r in rows], "^-", label="CPU, NumPy")
    ax.set_xlabel("elements n (float32)")
    ax.set_ylabel("time per call (ms, median)")
    ax.set_title(title or f"Vector add on {device.current().label}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return fig
