"""The roofline of the learner's device, with their kernels placed on it.

A kernel that does ``F`` FLOPs and moves ``Q`` bytes cannot beat ``min(peak, (F / Q) ×
bandwidth)`` FLOP/s. On a GPU the two limits are this device's: the bandwidth of a
device-to-device copy measured now (``timing.copy_ceiling``, the practical ceiling) and the FP32
peak without tensor cores from its SM count and boost clock (``autograder.machine.facts.peak_fp32_flops``). In CPU
mode they are those of the course's reference GPU, an NVIDIA H200 measured by ``aag bench``
(``docs/benchmarks.md``), and a note says that placing a kernel by its measured time needs a GPU.

    ag.visual.roofline([dict(label="saxpy", flops=2 * n, bytes=12 * n, seconds=t)])
    ag.visual.roofline.for_problem("saxpy", kernel=saxpy, size=1 << 26)   # measured on a GPU

Points are dicts (``label``, ``flops``, ``bytes`` and ``seconds``, ``ms`` or ``median_ms``) or
``timing.Stats`` made with ``nbytes`` and ``flops``; one without a time is drawn hollow, on the
roof at its intensity: where the kernel sits and the best it could reach.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.learner.visual.plots import FigureView, is_wrong, new_figure


@dataclass(frozen=True)
class DeviceLimits:
    """The two ceilings of a roofline, and where they come from."""

    name: str
    peak_flops: float           # FP32 FLOP/s, no tensor cores
    bandwidth: float            # bytes/s, a device-to-device copy (the practical ceiling)
    measured_here: bool = False  # True: this machine's GPU, measured in this process
    source: str = ""

    @property
    def ridge(self) -> float:
        """The intensity (FLOP/byte) where the memory roof meets the compute roof."""
        return self.peak_flops / self.bandwidth

    def roof(self, intensity):
        """The best FLOP/s a kernel of this intensity can reach on this device."""
        return np.minimum(self.peak_flops, np.asarray(intensity, dtype=float) * self.bandwidth)


# The course's reference GPU, from one run of `aag bench` on 2026-11-29 (docs/bench-h200.json):
# 132 SMs × 128 FP32 lanes × 2 × 1.98 GHz, and the fastest device-to-device copy of 3.2 GB.
H200 = DeviceLimits(
    "NVIDIA H200", peak_flops=66.908e12, bandwidth=4269e9,
    source="the course's reference GPU, measured on 2026-11-29 "
           "(docs/benchmarks.md): FP32 peak from 132 SMs × 128 lanes × 2 × 1.98 GHz, "
           "bandwidth of a device-to-device copy of 3.2 GB")

_here: dict[str, DeviceLimits] = {}


def limits(device: Any = None, *, copy_bytes: int = 1 << 30) -> DeviceLimits:
    """The roofline's ceilings. ``device``: None (this GPU, measured once per process; the H200
    reference in CPU mode), ``"H200"``, a :class:`DeviceLimits`, or a dict with ``name``,
    ``peak_flops`` (FLOP/s) and ``bandwidth`` (bytes/s)."""
    if isinstance(device, DeviceLimits):
        return device
    if isinstance(device, dict):
        return DeviceLimits(**device)
    if isinstance(device, str):
        if device.strip().lower() in ("h200", "nvidia h200", "reference"):
            return H200
        raise ValueError(f"unknown device {device!r}: give 'H200', a DeviceLimits, or "
                         "dict(name=..., peak_flops=..., bandwidth=...)")
    if device is not None:
        raise TypeError(f"device must be None, 'H200', a DeviceLimits or a dict, not "
                        f"{type(device).__name__}")
    from autograder.machine import timing
    if not timing.measuring():      # CPU mode, or a notebook being graded: nothing is timed
        return H200
    if "limits" not in _here:
        from numba import cuda

        from autograder.machine.facts import peak_fp32_flops
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        ceiling = timing.copy_ceiling(copy_bytes)
        _here["limits"] = DeviceLimits(
            name, peak_flops=peak_fp32_flops(), bandwidth=ceiling.gbps * 1e9,
            measured_here=True,
            source=f"this GPU, measured now: bandwidth of a {copy_bytes / 1e9:.1f} GB "
                   f"{ceiling.label}; FP32 peak from its SM count and boost clock (no tensor "
                   "cores; a GPU held at lower clocks reaches less)")
    return _here["limits"]


# ---- points -------------------------------------------------------------------------------------

def _point(item: Any) -> dict:
    """label, flops, bytes and seconds (None: not measured) from a dict or a timing.Stats."""
    if hasattr(item, "median_ms"):
        p = {"label": item.label, "flops": item.flops, "bytes": item.bytes,
             "seconds": item.median_ms * 1e-3}
    elif isinstance(item, dict):
        p = dict(item)
        if p.get("seconds") is None:
            for key in ("ms", "median_ms"):
                if p.get(key) is not None:
                    p["seconds"] = float(p[key]) * 1e-3
                    break
    else:
        raise TypeError(f"a roofline point is a dict(label, flops, bytes, seconds) or a "
                        f"timing.Stats, not {type(item).__name__}")
    for key in ("flops", "bytes"):
        if p.get(key) is None:
            raise ValueError(f"roofline point {p.get('label', '?')!r} has no {key!r}")
    if p["bytes"] <= 0:
        raise ValueError(f"roofline point {p.get('label', '?')!r}: bytes must be positive")
    p.setdefault("label", "")
    p.setdefault("seconds", None)
    return p


def place(points, lim: DeviceLimits) -> list[dict]:
    """Each point with its intensity, the roof there, which roof binds, and (when timed) the
    achieved GFLOP/s, GB/s and fraction of the roof."""
    placed = []
    for item in points:
        p = _point(item)
        intensity = p["flops"] / p["bytes"]
        roof = float(lim.roof(intensity)) if intensity > 0 else 0.0
        p.update(intensity=intensity, roof=roof,
                 bound="memory" if intensity < lim.ridge else "compute")
        if p["seconds"]:
            p["achieved"] = p["flops"] / p["seconds"]
            p["gbps"] = p["bytes"] / p["seconds"] / 1e9
            p["fraction"] = p["achieved"] / roof if roof else None
            p["of_bandwidth"] = p["bytes"] / p["seconds"] / lim.bandwidth
        placed.append(p)
    return placed


# ---- the picture --------------------------------------------------------------------------------

class Roofline(FigureView):
    """A roofline as a visual aid (``aag-visual aag-visual-roofline``); ``.limits`` are the
    ceilings used, ``.points`` each kernel's numbers (intensity, roof, achieved, fraction)."""

    def __init__(self, figure, lim: DeviceLimits, points: list[dict], text: str, note: str):
        super().__init__(figure, "roofline", text, note, alt=f"roofline of {lim.name}")
        self.limits = lim
        self.points = points


def _gflops(x: float) -> str:
    return f"{x / 1e12:,.1f} TFLOP/s" if x >= 1e13 else f"{x / 1e9:,.0f} GFLOP/s"


def roofline(points=(), device: Any = None, *, title: str = "") -> Roofline:
    """A log-log roofline of ``device`` (see :func:`limits`) with ``points`` on it: each labelled
    with its achieved GFLOP/s and the fraction of the roof at its intensity; the ridge point
    marked. In CPU mode (no ``device`` given) it shows the H200 reference with a note."""
    from autograder.machine import device as backend
    lim = limits(device)
    placed = place(points, lim)
    drawable = [p for p in placed if p["intensity"] > 0]
    intensities = [p["intensity"] for p in drawable] + [lim.ridge]
    lo = min(min(intensities) / 6, 1 / 16)
    hi = max(max(intensities) * 6, lim.ridge * 16)

    fig, ax = new_figure(7.5, 4.6)
    xs = np.logspace(np.log10(lo), np.log10(hi), 400)
    ax.axvspan(lo, lim.ridge, color="#3b6ea8", alpha=0.06)
    ax.axvspan(lim.ridge, hi, color="#e07b39", alpha=0.06)
    ax.loglog(xs, lim.roof(xs) / 1e9, color="black", lw=2)
    floor = float(lim.roof(lo)) / 1e9 / 20
    for p in drawable:
        floor = min(floor, p.get("achieved", p["roof"]) / 1e9 / 4)
    ax.set_xlim(lo, hi)
    ax.set_ylim(floor, lim.peak_flops / 1e9 * 3)
    ax.axvline(lim.ridge, color="grey", ls=":", lw=1)
    ax.annotate(f"ridge: {lim.ridge:.3g} FLOP/byte", (lim.ridge, floor), xytext=(4, 6),
                textcoords="offset points", color="grey", fontsize=8)
    mid = np.sqrt(lo * lim.ridge)                 # label the slope above its middle, clear of it
    ax.annotate(f"memory: {lim.bandwidth / 1e9:,.0f} GB/s", (mid, float(lim.roof(mid)) / 1e9),
                xytext=(-4, 4), textcoords="offset points", ha="right", va="bottom", fontsize=8)
    ax.annotate(f"FP32 peak: {_gflops(lim.peak_flops)}", (hi, lim.peak_flops / 1e9),
                xytext=(-6, 5), textcoords="offset points", ha="right", fontsize=8)
    ax.text(0.01, 0.98, "memory bound", transform=ax.transAxes, va="top", fontsize=8,
            color="#3b6ea8")
    ax.text(0.99, 0.98, "compute bound", transform=ax.transAxes, va="top", ha="right",
            fontsize=8, color="#b0581f")
    colours = ("#b5433f", "#3b6ea8", "#4c9a5b", "#7d5ba6", "#8a6d3b", "#d16ba5")
    for k, p in enumerate(drawable):
        colour = colours[k % len(colours)]
        ax.plot([p["intensity"]] * 2, [floor, p["roof"] / 1e9], color=colour, lw=0.8, ls="--",
                alpha=0.6)
        if "achieved" in p:
            wrong = is_wrong(p)
            ax.plot(p["intensity"], p["achieved"] / 1e9, "x" if wrong else "o", color=colour,
                    ms=8)
            text = (f"{p['label']}\n{_gflops(p['achieved'])}, "
                    f"{p['fraction']:.0%} of the roof" + ("\nWRONG results" if wrong else ""))
            at = p["achieved"] / 1e9
        else:
            ax.plot(p["intensity"], p["roof"] / 1e9, "o", mfc="white", color=colour, ms=8)
            text = f"{p['label']}: {p['intensity']:.3g} FLOP/byte\nat most {_gflops(p['roof'])}"
            at = p["roof"] / 1e9
        right_side = np.log(p["intensity"] / lo) > 0.6 * np.log(hi / lo)   # label to its left
        ax.annotate(text, (p["intensity"], at),
                    xytext=(-8 if right_side else 8, -14 - 22 * (k % 3)),
                    textcoords="offset points", fontsize=8, color=colour, va="top",
                    ha="right" if right_side else "left")
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("GFLOP/s")
    where = "this GPU, measured now" if lim.measured_here else "the course's reference GPU"
    ax.set_title(title or f"Roofline of {lim.name} ({where}; FP32, no tensor cores)",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.25)
    fig.tight_layout()

    notes = []
    cpu_mode = not lim.measured_here and device is None and not backend.current().is_gpu
    if not lim.measured_here and device is None and backend.current().is_gpu:
        notes.append("Not measured while the notebook is graded: these are the limits of the "
                     "course's reference GPU, an NVIDIA H200.")
    if cpu_mode:
        notes.append("CPU mode: these are the limits of the course's reference GPU, an NVIDIA "
                     "H200 (measured on it, docs/benchmarks.md). Placing your kernels "
                     "by their measured time needs a GPU; there this plot uses your GPU's own "
                     "limits. A hollow point marks a kernel's intensity and the best it could "
                     "reach.")
    for p in placed:
        if p["intensity"] <= 0:
            extra = (f": {p['gbps']:,.0f} GB/s, {p['of_bandwidth']:.0%} of the copy bandwidth"
                     if p["seconds"] else "")
            notes.append(f"{p['label']} does no arithmetic (bytes only), so it has no place on "
                         f"a FLOP roofline; set it against the memory roof instead{extra}.")
    untimed = "(not timed: needs a GPU)" if cpu_mode else "(not timed)"
    return Roofline(fig, lim, placed, _table(lim, placed, untimed), " ".join(notes))


def _table(lim: DeviceLimits, placed: list[dict], untimed: str) -> str:
    lines = [f"Roofline of {lim.name}: FP32 peak {_gflops(lim.peak_flops)}, memory "
             f"{lim.bandwidth / 1e9:,.0f} GB/s, ridge {lim.ridge:.3g} FLOP/byte"
             + (f" ({lim.source})" if lim.source else "")]
    if placed:
        lines.append(f"  {'kernel':28s} {'FLOP/byte':>9s} {'bound':>8s} {'roof':>15s} "
                     f"{'achieved':>15s} {'of roof':>8s} {'GB/s':>8s}")
    for p in placed:
        line = (f"  {p['label'][:28]:28s} {p['intensity']:9.3g} {p['bound']:>8s} "
                f"{_gflops(p['roof']):>15s} ")
        if p["intensity"] <= 0:
            line = f"  {p['label'][:28]:28s} {'–':>9s} {'(bytes only, no arithmetic)':^49s}"
            line += f" {p['gbps']:8,.0f}" if p["seconds"] else ""
        elif p["seconds"]:
            frac = f"{p['fraction']:.0%}" if p.get("fraction") is not None else "–"
            line += f"{_gflops(p['achieved']):>15s} {frac:>8s} {p['gbps']:8,.0f}"
            if is_wrong(p):
                line += "  WRONG results"
        else:
            line += f"{'–':>15s} {'–':>8s} {'–':>8s}  {untimed}"
        lines.append(line)
    return "\n".join(lines)


# ---- course problems ----------------------------------------------------------------------------

def _problem(problem):
    if not isinstance(problem, str):
        return problem
    from autograder.problems import ALL
    name = problem.split(".")[-1]            # "saxpy" or "ch01.saxpy"
    if name not in ALL:
        raise KeyError(f"no course problem named {problem!r}")
    return ALL[name]


def _default_size(problem):
    if problem.gpu_sizes.speed:
        return problem.gpu_sizes.speed
    visible = list(problem.gpu_sizes.visible)
    if visible and all(isinstance(s, int) for s in visible):
        return max(max(visible), 1 << 26)    # enough bytes to leave the L2 cache far behind
    return max(visible, key=lambda s: float(np.prod(s)))


def problem_point(problem, seconds: float | None = None, size=None, label: str = "") -> dict:
    """The roofline point of a course problem at ``size``: its FLOPs and bytes (the bytes it must
    move: inputs read once, outputs written once), and ``seconds`` if it was timed."""
    problem = _problem(problem)
    if problem.bytes_moved is None or problem.flops is None:
        raise ValueError(f"{problem.name} has no FLOP and byte counts, so no place on a roofline")
    size = _default_size(problem) if size is None else size
    return {"label": label or problem.name, "flops": problem.flops(size),
            "bytes": problem.bytes_moved(size), "seconds": seconds, "size": size}


def _launch_shape(problem, size, threads):
    if problem.speed_launch:
        return problem.speed_launch(size)
    if not problem.block_sizes:
        return 0, threads or 256                  # the problem's launch picks its own grid
    t = threads or (256 if 256 in problem.block_sizes else
                    problem.visible_block_size or problem.block_sizes[0])
    return problem.blocks_for(size, t), t


def measure(problem, kernel, size=None, *, threads: int | None = None, repeats: int = 20,
            label: str = "", seed: int = 7) -> dict:
    """Time ``kernel`` on this GPU as the problem launches it, at ``size``, and return its
    roofline point. Inputs rotate through sets larger than twice the L2 cache; 4096 sampled
    outputs of the last call are checked against the spec (a wrong kernel is marked WRONG).
    Raises ``timing.NeedsGPU`` in CPU mode."""
    from autograder.machine import timing
    timing.require_gpu("Placing a kernel on the roofline by its time")
    from numba import cuda

    from autograder.core.checks import poison_value
    from autograder.core.spec import Case
    problem = _problem(problem)
    point = problem_point(problem, size=size, label=label)
    size = point["size"]
    blocks, threads = _launch_shape(problem, size, threads)
    rng = np.random.default_rng(seed)
    pool = timing.pool_size(point["bytes"])
    host = [problem.speed_inputs(rng, size) for _ in range(pool)]
    sets = [{k: cuda.to_device(v) if isinstance(v, np.ndarray) else v for k, v in h.items()}
            for h in host]
    outs = {name: cuda.to_device(np.full(shape, poison_value(dtype), dtype))
            for name, (shape, dtype) in problem.outputs(size).items()}
    case = Case(size=size, inputs={}, blocks=blocks, threads=threads)
    stats = timing.time_gpu(point["label"], lambda i: problem.launch(kernel, sets[i], outs, case),
                            pool=pool, repeats=repeats, nbytes=point["bytes"],
                            flops=point["flops"])
    last = (repeats - 1) % pool                   # the input set of the last timed call
    count = min(4096, int(np.prod(next(iter(problem.outputs(size).values()))[0])))
    idx = np.sort(rng.choice(int(np.prod(next(iter(problem.outputs(size).values()))[0])),
                             size=count, replace=False))
    expected, tolerance = problem.sampled(host[last], idx)
    right = True
    for name, want in expected.items():
        got = outs[name].copy_to_host().reshape(-1)[idx].astype(np.float64)
        right &= bool(np.all(np.abs(got - np.asarray(want, np.float64).reshape(-1))
                             <= np.asarray(tolerance[name], np.float64).reshape(-1)))
    point.update(seconds=stats.median_ms * 1e-3, right=right, blocks=blocks, threads=threads)
    return point


def for_problem(problem, kernel=None, *, seconds: float | None = None, size=None,
                label: str = "", device: Any = None, threads: int | None = None,
                repeats: int = 20) -> Roofline:
    """The roofline with one course problem on it: measured on this GPU when ``kernel`` is given
    and there is a GPU; at ``seconds`` when given; otherwise (CPU mode) at its intensity, on the
    H200 reference roof, hollow."""
    from autograder.machine import timing
    if kernel is not None and timing.measuring() and seconds is None:
        point = measure(problem, kernel, size, threads=threads, repeats=repeats, label=label)
    else:
        point = problem_point(problem, seconds=seconds, size=size, label=label)
    return roofline([point], device)


# `ag.visual.roofline` is this module once `autograder.visual.roofline` is imported (Python sets
# the package attribute to the submodule), so the module itself is callable: `ag.visual.roofline(
# points)` then means `roofline(points)`, however the package exposes it.
class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs) -> Roofline:
        return roofline(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
