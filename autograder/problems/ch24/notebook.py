"""What chapter 24's notebook calls outside the graded cells: the online pair traced step by
step, the CPU baselines timed, and the measuring cell (the learner's kernels, the course's, the
three-pass kernel, PyTorch's softmax where it is installed, and a copy of the same bytes, over
row lengths), with its chart; without a GPU the chart of the course's run on an H200; and for
24.4, Triton where it runs (stand-ins where it does not) and the cell that times the Triton and
Numba kernels side by side."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from autograder.problems.ch24.references import (reference_softmax_rows, reference_softmax_warp,
                                                 three_pass_softmax)
from autograder.problems.ch24.specs import (BASELINES, TRITON_DIVIDE, TRITON_SPREAD,
                                            make_rows_fast, rows_bytes, softmax_host,
                                            softmax_tolerance)

CHART = "ch24_measure"      # the measuring cell's recorded run: h200_ch24_measure.json here
TRITON_CHART = "ch24_triton"   # the Triton comparison cell's recorded run: h200_ch24_triton.json
LENGTHS = (32, 256, 1024, 4096, 16384, 65536)
TOTAL = 1 << 25             # values per timed matrix (128 MiB in, 128 MiB out)
COPY = "copy of the same bytes"
VENDOR = "torch.softmax (PyTorch)"
TRITON_LENGTHS = (256, 1024, 4096, 16384)     # rows one block of registers holds (24.4)


def online_steps(row) -> list[dict]:
    """The running pair of an online softmax over ``row``, one dict per value (in float64):
    the value, m and d after it, and whether d was rescaled."""
    m, d, out = -np.inf, 0.0, []
    for v in np.asarray(row, np.float64):
        rescaled = bool(v > m)
        if v > m:
            d, m = d * np.exp(m - v) + 1.0, v
        elif v > -np.inf:
            d += np.exp(v - m)
        out.append({"x": float(v), "m": float(m), "d": float(d), "rescaled": rescaled})
    return out


def merge(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """Two partial pairs (m, d) as one: the larger maximum, each sum rescaled to it."""
    (m1, d1), (m2, d2) = a, b
    m = max(m1, m2)
    if m == -np.inf:
        return m, 0.0
    return m, d1 * np.exp(m1 - m) + d2 * np.exp(m2 - m)


def time_cpu(rows: int = 2048, cols: int = 1024, seed: int = 24) -> list[dict]:
    """The CPU baselines on ``rows × cols`` values: label, ms, GB/s (x read and y written once),
    right (bool: within the float32 bound)."""
    from autograder.machine import timing
    x = make_rows_fast(np.random.default_rng(seed), rows, cols)
    y = np.empty_like(x)
    exact = softmax_host(x)
    tol = softmax_tolerance(x, cols)
    out = []
    for base in BASELINES.values():
        y[:] = np.nan
        stats = timing.time_cpu(base.label, lambda: base.run(x=x, y=y), repeats=3,
                                nbytes=rows_bytes((rows, cols)))
        out.append({"label": base.label, "ms": stats.median_ms, "gbps": stats.gbps,
                    "right": bool(np.all(np.abs(y - exact) <= tol))})
    return out


def _right(y_host: np.ndarray, x: np.ndarray, seed: int = 1) -> bool:
    """y checked at 64 sampled rows against the float64 softmax and its bound (the longest chain
    any of the kernels can build, and Triton's exponential and division, the loosest)."""
    rows = np.random.default_rng(seed).choice(x.shape[0], size=min(64, x.shape[0]),
                                              replace=False)
    tol = softmax_tolerance(x[rows], max(x.shape[1], 14), spread_units=TRITON_SPREAD,
                            divide_units=TRITON_DIVIDE)
    return bool(np.all(np.abs(y_host[rows] - softmax_host(x[rows])) <= tol))


def _torch_softmax():
    """PyTorch's softmax on the GPU, or None where PyTorch or its GPU is missing (an optional
    comparison: the course never needs PyTorch)."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None

    try:                        # softmax with out= (recent PyTorch), else a result and a copy
        probe = torch.zeros((2, 3), device="cuda")
        torch.softmax(probe, dim=1, out=torch.empty_like(probe))
        into = True
    except (TypeError, RuntimeError):
        into = False

    def run(x, y):
        tx, ty = torch.as_tensor(x, device="cuda"), torch.as_tensor(y, device="cuda")
        if into:
            torch.softmax(tx, dim=1, out=ty)
        else:
            ty.copy_(torch.softmax(tx, dim=1))
    return run


def measure(kernels: dict | None = None, lengths=LENGTHS, total: int = TOTAL,
            repeats: int = 20, seed: int = 24, course: bool = True) -> list[dict]:
    """Time row softmaxes on a GPU over row lengths ``lengths`` (``total`` values each, so
    ``total // cols`` rows): the course's one-thread-per-row and one-warp-per-row kernels and
    the three-pass kernel (unless ``course`` is False), PyTorch's softmax where it is installed,
    NumPy on the host and a device copy of the same bytes, beside ``kernels``:
    ``{label: ("rows", kernel)}`` for a kernel of Exercise 24.1 (one thread per row, blocks of
    128), ``{label: ("warp", kernel)}`` for one of 24.2 (256 threads a block, 8 blocks per SM,
    grid-stride over rows), ``{label: ("triton", launcher)}`` for a launcher of 24.4
    (``launcher(x, y)``). Rows: label, cols, rows, ms, gbps (x read once and y written once),
    right (bool: y checked at 64 rows)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the softmax kernels")
    from numba import cuda
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    warp = cuda.get_current_device().WARP_SIZE if hasattr(cuda.get_current_device(),
                                                          "WARP_SIZE") else 32
    runs = {"one thread per row (course)": ("rows", reference_softmax_rows()),
            "one warp per row, online (course)": ("warp", reference_softmax_warp()),
            "one warp per row, three passes": ("warp", three_pass_softmax())} if course else {}
    runs.update(kernels or {})
    vendor = _torch_softmax()
    out = []
    for cols in lengths:
        rows = max(1, total // int(cols))
        x = make_rows_fast(np.random.default_rng(seed + int(cols)), rows, int(cols))
        nbytes = rows_bytes((rows, cols))
        dx, dy = cuda.to_device(x), cuda.device_array(x.shape, np.float32)
        poison = np.full(x.shape, np.nan, np.float32)

        def record(label, launch, check=True):
            dy.copy_to_device(poison)
            stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=nbytes)
            out.append({"label": label, "cols": int(cols), "rows": rows, "ms": stats.median_ms,
                        "gbps": stats.gbps,
                        "right": _right(dy.copy_to_host(), x) if check else True})

        for label, (kind, kernel) in runs.items():
            if kind == "triton":
                record(label, lambda i, k=kernel: k(dx, dy))
                continue
            if kind == "rows":
                shape = (-(-rows // 128), 128)
            elif kind == "warp":
                shape = (max(1, min(sms * 8, -(-rows * warp // 256))), 256)
            else:
                raise ValueError(f"{label}: the kind is 'rows', 'warp' or 'triton', not {kind!r}")
            record(label, lambda i, k=kernel, s=shape: k[s](dx, dy))
        if vendor is not None:
            record(VENDOR, lambda i: vendor(dx, dy))
        copy = timing.copy_ceiling(nbytes)
        out.append({"label": COPY, "cols": int(cols), "rows": rows, "ms": copy.median_ms,
                    "gbps": nbytes / copy.median_ms / 1e6, "right": True})
        y = np.empty_like(x)
        cpu = timing.time_cpu(BASELINES["numpy"].label, lambda: BASELINES["numpy"].run(x=x, y=y),
                              repeats=3, nbytes=nbytes)
        out.append({"label": BASELINES["numpy"].label, "cols": int(cols), "rows": rows,
                    "ms": cpu.median_ms, "gbps": cpu.gbps, "right": _right(y, x)})
    folder = os.environ.get("AAG_RECORD", "").strip()
    if folder:
        _record(out, folder)
    return out


def _record(rows: list[dict], folder: str) -> Path:
    """Write the run as ``<device>_ch24_measure.json`` in ``folder``, with the device and the
    versions, for the chart CPU mode draws."""
    from autograder.machine.facts import gpu_facts, versions
    facts = gpu_facts()
    # 'NVIDIA H200' -> 'h200', as the course names its recorded runs.
    slug = "_".join("".join(c for c in w if c.isalnum())
                    for w in facts["name"].lower().replace("nvidia", " ").split()) or "gpu"
    os.makedirs(folder, exist_ok=True)
    path = Path(folder) / f"{slug}_{CHART}.json"
    path.write_text(json.dumps({"device": facts["name"], "device_facts": facts,
                                "versions": versions(), "total": TOTAL, "rows": rows},
                               indent=1, default=lambda v: v.item()))
    return path


def recorded(name: str = CHART) -> dict | None:
    """The course's H200 run named ``name`` (``h200_<name>.json`` in this folder), or None while
    it has not been recorded."""
    path = Path(__file__).resolve().parent / f"h200_{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def missing(name: str = CHART) -> str:
    """The sentence a CPU-mode cell prints while the course's H200 run of ``name`` is missing."""
    return (f"The course's H200 run of this cell (h200_{name}.json) has not been recorded yet: on "
            "a GPU, run the cell to see your own.")


def chart(rows: list[dict] | None = None, ax=None, name: str = CHART):
    """GB/s over row length, one line per way (x read once and y written once per value), the
    copy of the same bytes dashed. Without ``rows``: the course's recorded H200 run ``name`` (the
    measuring cell's, or :data:`TRITON_CHART`, Numba beside Triton; None, with :func:`missing`
    printed, while there is none)."""
    import matplotlib.pyplot as plt
    title = "Row softmax, 2^25 values"
    if rows is None:
        kept = recorded(name)
        if kept is None:
            print(missing(name))
            return None
        rows, title = kept["rows"], f"{title}: measured by the course on {kept['device']}"
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.5))
    for label in dict.fromkeys(r["label"] for r in rows):
        mine = sorted((r for r in rows if r["label"] == label), key=lambda r: r["cols"])
        style = dict(linestyle="--", color="gray") if label == COPY else dict(marker="o")
        ax.plot([r["cols"] for r in mine], [r["gbps"] for r in mine], label=label, **style)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("row length (columns)")
    ax.set_ylabel("GB/s (x read once, y written once)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return ax


# ---- 24.4: Triton where it runs ---------------------------------------------------------------------

class _MissingTriton:
    """Where Triton cannot run: ``triton.jit`` keeps the function (a launch says why it cannot
    run), ``next_power_of_2`` and ``cdiv`` work, so the exercise's cells still define their kernel
    and launcher and the notebook goes on."""

    def __init__(self, why: str):
        self.why = why

    def jit(self, fn=None, **options):
        if fn is None:
            return lambda f: self.jit(f)
        return _MissingKernel(fn, self.why)

    @staticmethod
    def next_power_of_2(n: int) -> int:
        return 1 << max(int(n) - 1, 0).bit_length()

    @staticmethod
    def cdiv(a: int, b: int) -> int:
        return -(-int(a) // int(b))


class _MissingKernel:
    """A ``@triton.jit`` function where Triton cannot run: launching it raises, saying why."""

    def __init__(self, fn, why: str):
        self.fn, self.why = fn, why
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            raise RuntimeError(f"{self.__name__} cannot run on this machine: {self.why}")
        return launch


class _MissingLanguage:
    """``triton.language`` where Triton cannot run: any name (``tl.constexpr`` in a signature)."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def import_triton():
    """``(triton, tl, why)``: Triton and ``triton.language`` with ``why`` None where Triton runs;
    elsewhere stand-ins (the cells still define the kernel and the launcher; nothing of Triton
    runs) and ``why``, what to install or why it cannot be, in words."""
    from autograder.machine import triton_bridge
    why = triton_bridge.unavailable_reason()
    if why is None:
        import triton
        import triton.language as tl
        return triton, tl, None
    return _MissingTriton(why), _MissingLanguage(), why


def compare_triton(warp_kernel, triton_launcher, lengths=TRITON_LENGTHS, total: int = TOTAL,
                   repeats: int = 20) -> list[dict]:
    """On a GPU: the learner's one-warp-per-row Numba kernel (24.2) and Triton launcher (24.4)
    beside the course's Triton kernel, PyTorch where it is installed, NumPy and a copy of the same
    bytes, over row lengths a block holds (rows as :func:`measure` gives them)."""
    from autograder.problems.ch24.references import reference_softmax_triton
    return measure({"one warp per row, Numba (yours)": ("warp", warp_kernel),
                    "one program per row, Triton (yours)": ("triton", triton_launcher),
                    "one program per row, Triton (course)": ("triton",
                                                             reference_softmax_triton())},
                   lengths=lengths, total=total, repeats=repeats, course=False)


__all__ = ["CHART", "COPY", "TRITON_CHART", "LENGTHS", "TOTAL", "TRITON_LENGTHS", "VENDOR", "chart",
           "compare_triton", "import_triton", "measure", "merge", "missing", "online_steps",
           "recorded", "time_cpu"]
