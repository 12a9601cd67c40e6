"""Guided experiments that measure rather than grade (the chapters call these)."""

from __future__ import annotations

import json
import os
from importlib import resources

import numpy as np

from autograder.machine import device, timing


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
    """Results the course measured on its reference GPU (shipped with the package): a chapter's
    in its folder (``h200_ch05_matmul``), the course's own in ``autograder/data/``."""
    from autograder.problems import recorded_file
    path = recorded_file(name)
    if path is not None:
        return json.loads(path.read_text())
    return json.loads(resources.files("autograder.data").joinpath(f"{name}.json").read_text())


def _slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200': the prefix of a device's recorded measurements."""
    words = [w for w in name.lower().replace("nvidia", " ").split() if w]
    return "_".join("".join(c for c in w if c.isalnum()) for w in words) or "gpu"


REFERENCE_GPU = "h200"          # the device whose measurements ship in autograder/data/


def steps(name: str, rows=None, *, reference=None, bounds: dict | None = None,
          title: str = "", over: str = "first"):
    """The picture of a chapter's measuring cell: each kernel's time and its speedup
    (``visual.speedup_steps``).

    With ``rows`` (on a GPU, what the cell just measured): draws them. When the environment
    variable ``AAG_RECORD`` names a folder (the course's own runs on its reference GPU), the rows
    are also written there as ``<device>_<name>.json`` with the device and versions, to be shipped
    in the chapter's folder for learners without a GPU.

    Without ``rows`` (CPU mode): draws what the course measured on its reference GPU
    (``autograder/problems/chNN/h200_<name>.json``), titled with the device."""
    from autograder.learner.visual.plots import pick_references, as_rows, speedup_steps

    if rows is None:
        kept = recorded(f"{REFERENCE_GPU}_{name}")
        return speedup_steps(kept["rows"], kept["reference"] or None, bounds=kept["bounds"],
                             over=kept.get("over", over),
                             title=f"{kept['title']}: measured by the course on {kept['device']}")
    rows, refs = pick_references(as_rows(rows), reference)       # a label moves a row out
    bounds = {str(k): float(v) for k, v in (bounds or {}).items()}
    folder = os.environ.get("AAG_RECORD", "").strip()
    if folder:
        from autograder.machine.facts import gpu_facts, versions
        facts = gpu_facts()
        here = facts["name"]
        keep = {"device": here, "device_facts": facts, "versions": versions(),
                "title": title or name, "over": over, "rows": rows, "reference": refs,
                "bounds": bounds}
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{_slug(here)}_{name}.json"), "w") as f:
            json.dump(keep, f, indent=1, default=_plain)
    else:
        here = _device_name()
    return speedup_steps(rows, refs or None, bounds=bounds or None, over=over,
                         title=f"{title or name}: measured on {here}")


def _device_name() -> str:
    try:
        from autograder.machine.facts import gpu_facts
        return gpu_facts()["name"]
    except Exception:                        # numba-hip, or a driver that will not say
        return device.current().label


def _plain(value):
    """numpy scalars (a row's ``right`` may be a numpy bool) as JSON's own types."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot record a {type(value).__name__}")
