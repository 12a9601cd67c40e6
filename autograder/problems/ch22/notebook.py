"""What chapter 22's notebook calls outside the graded cells: what CPU mode does with streams and
host memory, a pipeline tried once with the grader's eye on its copies, the timeline of a
pipeline drawn from CUDA event stamps (a Gantt chart per stream), and the "measure it" cell (the
pipeline against the serial copy–kernel–copy, Python's launch overhead, many launches against one,
ILP against occupancy, unified memory's page faults, and CUDA graphs through CuPy where CuPy is
installed)."""

from __future__ import annotations

import time

import numpy as np

from autograder.problems.ch22.references import (ILP, THREADS, reference_axpb, reference_batched,
                                                 reference_ilp, reference_one_each,
                                                 reference_pipeline, serial_pipeline)
from autograder.problems.ch22.specs import (StreamTrace, axpb_tolerance, batched_inputs,
                                            ilp_blocks, pipeline_inputs)


# ---- what CPU mode does with the stream API ------------------------------------------------------

def cpu_mode_table() -> list[tuple[str, str, str]]:
    """(call, what a GPU does, what CPU mode does) for the calls of this chapter."""
    return [
        ("cuda.stream()", "a new queue; work on different streams may overlap",
         "an object whose work runs at once, in order with everything else"),
        ("cuda.to_device(a, stream=s)", "queues the copy on s and returns (async from pinned memory)",
         "copies at once"),
        ("d.copy_to_host(a, stream=s)", "queues the copy back on s and returns",
         "waits for the kernels queued before it, then copies"),
        ("k[grid, block, s](...)", "queues the kernel on s and returns",
         "runs the kernel to the end, in Python (the stream argument is ignored)"),
        ("cuda.pinned_array(...)", "page-locked host memory: copies from it can be asynchronous",
         "an ordinary NumPy array"),
        ("cuda.mapped_array(...)", "pinned host memory the GPU reads over the bus",
         "a simulated device array"),
        ("cuda.managed_array(...)", "unified memory: pages migrate on first touch (page faults)",
         "missing (AttributeError): the simulator has no managed memory, no pages, no faults"),
        ("event.record(s); cuda.event_elapsed_time", "stamped when the GPU reaches the event",
         "stamped when the course's single in-order timeline reaches it (host clock)"),
    ]


def show_cpu_mode() -> None:
    """Print what this machine's backend returns for each call, beside the table above."""
    from numba import cuda
    from autograder.machine import device
    print(f"backend: {device.current().label}")
    for call, gpu, cpu in cpu_mode_table():
        print(f"- {call}\n    GPU: {gpu}\n    CPU mode: {cpu}")
    print()
    for name in ("pinned_array", "mapped_array", "managed_array"):
        make = getattr(cuda, name, None)
        if make is None:
            print(f"cuda.{name}(4): not in this backend's numba.cuda")
            continue
        made = make(4, dtype=np.float32)
        print(f"cuda.{name}(4): a {type(made).__module__}.{type(made).__name__}")


# ---- one pipeline call, with the grader's eye on it ----------------------------------------------

def try_pipeline(pipeline, n: int = 1000, chunks: int = 7, streams: int = 3, seed: int = 22):
    """Run ``pipeline(x, out, a, b, chunks, streams)`` once on pinned arrays; return (what it
    stored, the float64 answer, what the grader says about its copies: None when all is well)."""
    from numba import cuda
    inputs = pipeline_inputs(np.random.default_rng(seed), n)
    x = cuda.pinned_array(n, np.float32)
    x[:] = inputs["x"]
    out = cuda.pinned_array(n, np.float32)
    out[:] = np.nan
    with StreamTrace(x, out) as trace:
        pipeline(x, out, inputs["a"], inputs["b"], chunks, streams)
        cuda.synchronize()
    expected = float(inputs["a"]) * x.astype(np.float64) + float(inputs["b"])
    return np.array(out), expected, trace.verdict(n, chunks, streams)


# ---- the timeline: event stamps per chunk, stage and stream --------------------------------------

STAGE_COLOURS = {"copy in": "#4c72b0", "kernel": "#dd8452", "copy out": "#55a868"}


def stamps_to_rows(stamps: list) -> list[dict]:
    """``[chunk, stream, stage, start_event, end_event]`` (after a synchronize) as rows of
    milliseconds from the first start: chunk, stream, stage, start_ms, end_ms."""
    from numba import cuda
    if not stamps:
        return []
    first = stamps[0][3]
    return [{"chunk": c, "stream": s, "stage": stage,
             "start_ms": cuda.event_elapsed_time(first, e0),
             "end_ms": cuda.event_elapsed_time(first, e1)} for c, s, stage, e0, e1 in stamps]


def timeline(n: int = 1 << 26, chunks: int = 8, streams: int = 4, rounds: int = 0,
             seed: int = 22) -> list[dict]:
    """On a GPU: the course's pipeline on ``n`` floats in pinned memory, ``chunks`` pieces over
    ``streams`` streams (``rounds`` > 0: the map applied that many times per element, to make the
    kernels as long as the copies), each stage of each chunk bracketed by two events on its
    stream. Rows as :func:`stamps_to_rows`; checked right."""
    from autograder.machine import timing
    timing.require_gpu("The pipeline's timeline")
    from numba import cuda
    x = cuda.pinned_array(n, np.float32)
    x[:] = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    out = cuda.pinned_array(n, np.float32)
    a, b = np.float32(0.999), np.float32(0.001)
    reference_pipeline(x, out, a, b, chunks, streams, rounds=rounds)    # warm-up: compiles
    stamps: list = []
    reference_pipeline(x, out, a, b, chunks, streams, rounds=rounds, stamps=stamps)
    cuda.synchronize()
    return stamps_to_rows(stamps)


def overlap(rows: list[dict]) -> dict:
    """From a timeline's rows: the span (ms), the sum of the stages' times (ms), and how much of
    the span had two stages or more running at once (a fraction)."""
    if not rows:
        return {"span_ms": 0.0, "busy_ms": 0.0, "overlapped": 0.0}
    edges = sorted({r["start_ms"] for r in rows} | {r["end_ms"] for r in rows})
    span = edges[-1] - edges[0]
    together = 0.0
    for lo, hi in zip(edges, edges[1:]):
        mid = (lo + hi) / 2
        if sum(r["start_ms"] <= mid < r["end_ms"] for r in rows) >= 2:
            together += hi - lo
    return {"span_ms": span, "busy_ms": sum(r["end_ms"] - r["start_ms"] for r in rows),
            "overlapped": together / span if span > 0 else 0.0}


def draw_timeline(rows: list[dict], title: str = "", ax=None):
    """A Gantt chart: one lane per stream, a bar per stage of each chunk (copy in, kernel, copy
    out), the chunk's number on it. Bars that sit above each other in time overlap on the GPU."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 0.9 + 0.6 * max(1, len({r["stream"] for r in rows}))))
    lanes = sorted({r["stream"] for r in rows})
    for r in rows:
        y = lanes.index(r["stream"])
        width = max(r["end_ms"] - r["start_ms"], 1e-4)
        ax.barh(y, width, left=r["start_ms"], height=0.7, color=STAGE_COLOURS.get(r["stage"], "grey"),
                edgecolor="black", linewidth=0.4)
        ax.text(r["start_ms"] + width / 2, y, str(r["chunk"]), ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"stream {s}" for s in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds since the first copy started")
    ax.legend(handles=[Patch(color=c, label=s) for s, c in STAGE_COLOURS.items()], fontsize=8,
              loc="lower right")
    o = overlap(rows)
    ax.set_title((title + ": " if title else "") + f"{o['span_ms']:.2f} ms in all, "
                 f"{o['busy_ms']:.2f} ms of stages, two or more at once {o['overlapped']:.0%} "
                 "of the time", fontsize=9)
    return ax


TIMELINE = "ch22_timeline"   # the recorded timelines: h200_ch22_timeline.json in this folder
CHART = "ch22_measure"       # the measuring cell's recorded picture: h200_ch22_measure.json


def show_recorded_timelines() -> dict:
    """CPU mode: draw the course's H200 timelines (serial, then pipelined), from
    ``h200_ch22_timeline.json`` in this folder; returns what was drawn."""
    import json

    import matplotlib.pyplot as plt

    from autograder.problems import recorded_file
    kept = json.loads(recorded_file(f"h200_{TIMELINE}").read_text())
    runs = kept["runs"]
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 2.2 * len(runs)), squeeze=False)
    for ax, run in zip(axes[:, 0], runs):
        draw_timeline(run["rows"], title=f"{run['label']} (on {kept['device']})", ax=ax)
    fig.tight_layout()
    plt.show()
    return kept


def record_timelines(n: int = 1 << 26, chunks: int = 8, streams: int = 4, rounds: int = 0,
                     folder: str | None = None) -> dict:
    """On a GPU: the serial run and the pipelined one, as the CPU-mode cell draws them; written
    to ``folder/<device>_ch22_timeline.json`` when ``folder`` (or ``$AAG_RECORD``) is given."""
    from autograder.machine.facts import gpu_facts, versions
    runs = [{"label": "serial: copy in, kernel, copy out", "rows": timeline(n, 1, 1, rounds)},
            {"label": f"{chunks} chunks over {streams} streams",
             "rows": timeline(n, chunks, streams, rounds)}]
    facts = gpu_facts()
    kept = {"device": facts["name"], "device_facts": facts, "versions": versions(), "n": n,
            "rounds": rounds, "runs": runs}
    return _record(kept, TIMELINE, folder)


def _record(kept: dict, what: str, folder: str | None) -> dict:
    """Write ``kept`` to ``folder/<device>_<what>.json`` when ``folder`` (or ``$AAG_RECORD``) is
    given; return it."""
    import json
    import os
    folder = folder or os.environ.get("AAG_RECORD", "").strip()
    if folder:
        # 'NVIDIA H200' -> 'h200', as the course names its recorded runs.
        slug = "_".join("".join(c for c in w if c.isalnum())
                        for w in kept["device"].lower().replace("nvidia", " ").split()) or "gpu"
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{slug}_{what}.json"), "w") as f:
            json.dump(kept, f, indent=1)
    return kept


# ---- the measuring cell --------------------------------------------------------------------------

def _pinned_pair(n: int, seed: int):
    from numba import cuda
    x = cuda.pinned_array(n, np.float32)
    x[:] = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    out = cuda.pinned_array(n, np.float32)
    return x, out


def _right(got, x, a, b) -> bool:
    idx = np.random.default_rng(1).choice(x.size, size=min(4096, x.size), replace=False)
    exp = float(a) * x[idx].astype(np.float64) + float(b)
    return bool(np.all(np.abs(got[idx] - exp) <= axpb_tolerance(x[idx], a, b)))


def _wall_ms(fn, repeats: int) -> float:
    """Median wall time of ``fn()`` (it synchronizes itself): for host-driven work."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - t0))
    return float(np.median(times))


def measure_pipeline(pipeline=None, n: int = 1 << 26, chunks: int = 8, streams: int = 4,
                     repeats: int = 10) -> list[dict]:
    """On a GPU: the serial copy–kernel–copy, the course's pipeline and ``pipeline`` (yours) on
    ``n`` floats in pinned memory, and the two copies alone (a lower bound: the pipeline cannot
    beat the slower direction). Rows: label, ms, GB/s (bytes over the bus both ways), right."""
    from autograder.machine import timing
    timing.require_gpu("Timing the pipeline")
    from numba import cuda
    x, out = _pinned_pair(n, 22)
    a, b = np.float32(0.999), np.float32(0.001)
    nbytes = 8 * n
    rows = []

    def row(label, fn):
        out[:] = np.nan
        fn()
        cuda.synchronize()
        ok = _right(out, x, a, b)
        ms = _wall_ms(lambda: (fn(), cuda.synchronize()), repeats)
        rows.append({"label": label, "ms": ms, "gbps": nbytes / ms / 1e6, "right": ok})

    d = cuda.device_array(n, np.float32)

    def copies():
        d.copy_to_device(x)
        d.copy_to_host(out)
    copies()
    rows.append({"label": "the two copies alone, one after the other", "ms": _wall_ms(
        lambda: (copies(), cuda.synchronize()), repeats), "gbps": 0.0, "right": True})
    rows[-1]["gbps"] = nbytes / rows[-1]["ms"] / 1e6
    row("serial: copy in, kernel, copy out (course)", lambda: serial_pipeline(x, out, a, b))
    row(f"{chunks} chunks over {streams} streams (course)",
        lambda: reference_pipeline(x, out, a, b, chunks, streams))
    if pipeline is not None:
        row(f"{chunks} chunks over {streams} streams (yours)",
            lambda: pipeline(x, out, a, b, chunks, streams))
    return rows


def launch_overhead(launches: int = 2000) -> list[dict]:
    """On a GPU: the host's cost per launch of a tiny kernel, measured as the wall time of
    ``launches`` launches queued back to back (the GPU finishes each in microseconds, so the
    host is the limit): ``k[grid, block](...)`` each time, the configured kernel ``kc =
    k[grid, block]`` reused, the arguments prepared once and the driver called directly
    (:class:`autograder.machine.launch.BoundLaunch`), and CuPy's CUDA graph of the same launches replayed, where CuPy is
    installed. Rows: label, us_per_launch."""
    from autograder.machine import timing
    timing.require_gpu("Timing launches")
    from numba import cuda
    k = reference_axpb()
    x = cuda.to_device(np.ones(256, np.float32))
    y = cuda.device_array(256, np.float32)
    a, b = np.float32(2), np.float32(1)
    k[1, 256](x, y, a, b)
    cuda.synchronize()
    rows = []

    def each():
        for _ in range(launches):
            k[1, 256](x, y, a, b)
        cuda.synchronize()
    kc = k[1, 256]

    def reused():
        for _ in range(launches):
            kc(x, y, a, b)
        cuda.synchronize()
    from autograder.machine.launch import BoundLaunch
    bound = BoundLaunch(k, 1, 256, x, y, a, b)

    def bound_each():
        for _ in range(launches):
            bound()
        cuda.synchronize()
    for label, fn in (("k[grid, block](...) every time", each),
                      ("kc = k[grid, block] once, kc(...) every time", reused),
                      ("arguments prepared once, one cuLaunchKernel a call (BoundLaunch)",
                       bound_each)):
        rows.append({"label": label, "us_per_launch": 1e3 * _wall_ms(fn, 5) / launches})
    rows += _cupy_graph_rows(launches)
    return rows


def _cupy_graph_rows(launches: int) -> list[dict]:
    """CuPy's stream capture: the same tiny kernel captured ``launches`` times into a CUDA graph,
    then the graph launched once. Empty where CuPy cannot be imported (it is not a course
    dependency)."""
    try:
        import cupy
    except Exception:
        return []
    x = cupy.ones(256, cupy.float32)
    y = cupy.empty_like(x)
    axpb = cupy.ElementwiseKernel("float32 x, float32 a, float32 b", "float32 y",
                                  "y = a * x + b", "ch22_axpb")
    a, b = cupy.float32(2), cupy.float32(1)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        axpb(x, a, b, y)
        stream.synchronize()

        def direct():
            for _ in range(launches):
                axpb(x, a, b, y)
            stream.synchronize()
        stream.begin_capture()
        for _ in range(launches):
            axpb(x, a, b, y)
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()

        def replay():
            graph.launch(stream)
            stream.synchronize()
        rows = [{"label": "CuPy kernel launched every time", "us_per_launch":
                 1e3 * _wall_ms(direct, 5) / launches},
                {"label": "CuPy: the same launches captured once as a CUDA graph, replayed",
                 "us_per_launch": 1e3 * _wall_ms(replay, 5) / launches}]
    return rows


# ---- one call, end to end: the course's sum, scan and histogram as a caller sees them ------------

CALLS = "ch22_calls"         # the recorded per-call costs: h200_ch22_calls.json in this folder
CALL_SIZES = (1 << 18, 1 << 24)
# A row's kind, read from the start of its label (the empty kernel's rows are "launch").
_KIND_OF_PREFIX = (("exercise", "exercise launch"), ("course helper", "course helper"),
                   ("torch.", "PyTorch"), ("CUB", "CUB"), ("cupy.", "CuPy"))
CALL_KINDS = tuple(kind for _, kind in _KIND_OF_PREFIX)
# The empty kernel's two launches the chart draws as the floor (the table has a third).
NUMBA_LAUNCH = "empty kernel, Numba: k[1, 32](a, b)"
BOUND_LAUNCH = "empty kernel, bound launch (one cuLaunchKernel)"


def call_costs(sizes=CALL_SIZES, repeats: int = 40, more=None) -> dict:
    """On a GPU: the course's sum (chapter 10), scan (chapter 11) and histogram (chapter 9) called
    from Python, each figure of :func:`autograder.machine.timing.time_call` per row: the
    exercise's launch (as the checks launch the reference: a zeroing kernel, or the scan's four
    fills, then the kernel, each through Numba's launch), the helper for code outside the
    exercises (one launch bound once, :mod:`autograder.machine.launch`), PyTorch and CuPy where
    they import (neither is a course dependency), and one empty kernel launched by Numba and by a
    bound launch, the floor under every row. ``more(n, arrays)`` may add rows: ``(op, label,
    make)`` triples, ``make()`` returning the call to time (``aag bench`` adds CUB's own).
    Returns ``{"rows": [...], "bound_fast": ..., "bound_why": ...}``; a row whose library failed
    has ``error`` instead of times."""
    from autograder.machine import timing
    timing.require_gpu("Timing calls")
    from numba import cuda

    from autograder.machine.launch import BoundLaunch
    from autograder.problems import ch09, ch10, ch11
    from autograder.problems.ch09.references import histogram_on_device, reference_private
    from autograder.problems.ch10.references import reference_sum, sum_on_device
    from autograder.problems.ch10.specs import run_sum
    from autograder.problems.ch11.references import reference_single_pass, scan_on_device
    try:
        import torch
    except Exception:
        torch = None
    try:
        import cupy as cp
    except Exception:
        cp = None

    @cuda.jit
    def empty(a, b):
        pass

    a = cuda.device_array(32, np.float32)
    b = cuda.device_array(32, np.float32)
    rows = []

    def add(op, n, label, call=None, make=None):
        try:
            rows.append({"op": op, "n": n, "label": label,
                         **timing.time_call(make() if make is not None else call, repeats)})
        except Exception as exc:   # one failing library must not hide the other rows
            rows.append({"op": op, "n": n, "label": label, "error": repr(exc)[:300]})

    configured = empty[1, 32]
    bound_empty = BoundLaunch(empty, 1, 32, a, b)
    add("launch", 0, NUMBA_LAUNCH, lambda: empty[1, 32](a, b))
    add("launch", 0, "empty kernel, Numba, configured once: kc(a, b)", lambda: configured(a, b))
    add("launch", 0, BOUND_LAUNCH, bound_empty)
    rng = np.random.default_rng(23)
    for n in sizes:
        x = cuda.to_device(rng.uniform(-1, 1, n).astype(np.float32))
        out = cuda.device_array(1, np.float32)
        y = cuda.device_array(n, np.float32)
        data = cuda.to_device(rng.integers(0, 256, n).astype(np.uint8))
        hist = cuda.device_array(256, np.uint32)
        sum_shape, hist_shape = ch10.speed_shape(n), ch09.speed_shape(n)
        add("sum", n, "exercise launch (zero kernel + reference)",
            lambda: run_sum(reference_sum(), x, out, *sum_shape))
        add("sum", n, "course helper sum_on_device (memset + bound launch)",
            lambda: sum_on_device(x, out))
        add("scan", n, "exercise launch (4 fills + reference)",
            lambda: ch11.single_pass_scan(reference_single_pass(), x, y, ch11.SPEED_THREADS))
        add("scan", n, "course helper scan_on_device (bound launch)",
            lambda: scan_on_device(x, y))
        add("histogram", n, "exercise launch (zero kernel + reference)",
            lambda: ch09.run_histogram(reference_private(), data, hist, *hist_shape))
        add("histogram", n, "course helper histogram_on_device (memset + bound launch)",
            lambda: histogram_on_device(data, hist))
        if torch is not None:
            tx, ty, tout, td = (torch.as_tensor(v, device="cuda") for v in (x, y, out, data))
            tout = tout.reshape(())
            add("sum", n, "torch.sum (CUB)", lambda: torch.sum(tx, 0, out=tout))
            add("scan", n, "torch.cumsum (CUB)", lambda: torch.cumsum(tx, 0, out=ty))
            add("histogram", n, "torch.bincount(minlength=256)",
                lambda: torch.bincount(td, minlength=256))
        for op, label, make in (more(n, {"x": x, "y": y, "out": out, "data": data,
                                         "hist": hist}) if more else ()):
            add(op, n, label, make=make)
        if cp is not None:
            cx, cy, cout, cd = (cp.asarray(v) for v in (x, y, out, data))
            add("sum", n, "cupy.sum", lambda: cp.sum(cx, out=cout.reshape(())))
            add("scan", n, "cupy.cumsum", lambda: cp.cumsum(cx, out=cy))
            add("histogram", n, "cupy.bincount", lambda: cp.bincount(cd, minlength=256))
    return {"rows": rows, "bound_fast": bound_empty.fast, "bound_why": bound_empty.why}


def call_kind(label: str) -> str:
    """Which of :data:`CALL_KINDS` a row of :func:`call_costs` is ("launch" for the empty
    kernel's rows)."""
    if label.startswith("empty kernel"):
        return "launch"
    for prefix, kind in _KIND_OF_PREFIX:
        if label.startswith(prefix):
            return kind
    return label


def calls_table(rows: list[dict]) -> str:
    """The rows of :func:`call_costs` as a Markdown table."""
    lines = ["| operation | n | call | device (µs) | host per call (µs) | end to end (µs) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['op']} | {r['n']:,} | {r['label']} | {r['error']} | | |")
            continue
        lines.append(f"| {r['op']} | {r['n']:,} | {r['label']} | {r['device_us']:.1f} | "
                     f"{r['host_us']:.1f} | {r['end_to_end_us']:.1f} |")
    return "\n".join(lines)


def record_calls(folder: str | None = None, **kwargs) -> dict:
    """On a GPU: :func:`call_costs`, kept with the device and versions; written to
    ``folder/<device>_ch22_calls.json`` when ``folder`` (or ``$AAG_RECORD``) is given."""
    from autograder.machine.facts import gpu_facts, versions
    facts = gpu_facts()
    kept = {"device": facts["name"], "device_facts": facts, "versions": versions(),
            **call_costs(**kwargs)}
    return _record(kept, CALLS, folder)


def recorded_calls() -> dict:
    """The course's own run of :func:`record_calls` on the H200 (``h200_ch22_calls.json``)."""
    import json

    from autograder.problems import recorded_file
    return json.loads(recorded_file(f"h200_{CALLS}").read_text())


def call_bars(rows: list[dict], n: int) -> list[dict]:
    """What one panel of :func:`show_calls` draws for size ``n``: the empty kernel's launches,
    then per operation the exercise's launch, the course's helper, PyTorch and CUB (CuPy and
    failed rows left to the table), each {label, op, kind, device_us, end_to_end_us}."""
    bars = []
    for op in ("launch", "sum", "scan", "histogram"):
        for r in rows:
            if r["op"] != op or "error" in r or (op != "launch" and r["n"] != n):
                continue
            kind = call_kind(r["label"])
            if (op == "launch" and r["label"] not in (NUMBA_LAUNCH, BOUND_LAUNCH)
                    or kind == "CuPy"):
                continue
            bars.append({"label": r["label"], "op": op, "kind": kind,
                         "device_us": r["device_us"], "end_to_end_us": r["end_to_end_us"]})
    return bars


_KIND_COLOURS = {"launch": "#9e9e9e", "exercise launch": "#e4572e", "course helper": "#2e86ab",
                 "PyTorch": "#8e6c8a", "CUB": "#3b8b5a"}


def show_calls(kept: dict | None = None) -> dict:
    """Draw one panel per size of :func:`call_costs`'s rows: each call's end-to-end time as a
    bar, the GPU's own time the dark part of it, the rest Python's (and the driver's). Without
    ``kept``, the course's H200 run. Returns what was drawn."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    kept = kept if kept is not None else recorded_calls()
    rows = kept["rows"]
    sizes = sorted({r["n"] for r in rows if r["op"] != "launch"})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6.2 * len(sizes), 6.4), squeeze=False,
                             sharex=True)
    for ax, n in zip(axes[0], sizes):
        bars = call_bars(rows, n)
        ys = np.arange(len(bars))[::-1]
        for y, bar in zip(ys, bars):
            colour = _KIND_COLOURS.get(bar["kind"], "#777777")
            ax.barh(y, bar["end_to_end_us"], color=colour, alpha=0.35)
            ax.barh(y, min(bar["device_us"], bar["end_to_end_us"]), color=colour)
            ax.text(bar["end_to_end_us"], y, f" {bar['end_to_end_us']:.0f} µs", va="center",
                    fontsize=7)
        ax.set_yticks(ys)
        ax.set_yticklabels([f"{b['op']}: {b['label'].split(' (')[0]}" for b in bars], fontsize=7)
        ax.set_xlabel("µs per call, end to end (dark: the GPU's own time)")
        ax.set_title(f"{n:,} elements ({4 * n / 2**20:g} MiB of float32)", fontsize=9)
        ax.set_xlim(0, 1.18 * max(b["end_to_end_us"] for b in bars))
    axes[0][-1].legend(handles=[Patch(color=c, label=k) for k, c in _KIND_COLOURS.items()],
                       fontsize=7, loc="lower right")
    fig.suptitle(f"One call from Python, on {kept.get('device', 'this GPU')}", fontsize=10)
    fig.tight_layout()
    plt.show()
    return kept


def measure(pipeline=None, batched_kernel=None, ilp_kernel=None, repeats: int = 20,
            seed: int = 22) -> list[dict]:
    """On a GPU, the chapter's numbers in one list of rows (label, ms, GB/s, right, group):

    - "pipeline": :func:`measure_pipeline` (serial, the course's pipeline, yours);
    - "launches": 2,000 small problems (the speed test's) one launch each, with a configured
      kernel reused, and in one launch (the course's batched kernel, and yours);
    - "ilp": the copy-like map over 2^26 floats: one element per thread, and four per thread at
      a quarter of the threads (the course's, and yours);
    - "managed": a managed array written on the host, then read by a kernel (pages migrate on
      first touch), then read again (already on the GPU), beside the same kernel on device memory.
    """
    from autograder.machine import timing
    timing.require_gpu("Timing chapter 22's kernels")
    from numba import cuda
    from autograder.problems.ch22.specs import BATCHED_SPEED, ILP_SPEED, batched_sample
    rows = [dict(r, group="pipeline") for r in measure_pipeline(pipeline, repeats=10)]

    # -- many small problems: one launch each against one launch for all
    inputs = batched_inputs(np.random.default_rng(seed), BATCHED_SPEED)
    d = {k: cuda.to_device(v) for k, v in inputs.items()}
    total = inputs["x"].size
    out = cuda.device_array(total, np.float32)
    offsets = inputs["offsets"]
    nbytes = 8 * total
    k = reference_axpb()
    kc = k[64, THREADS]

    def check():
        idx = np.random.default_rng(2).choice(total, 4096, replace=False)
        got = out.copy_to_host()[idx]
        exp, tol = batched_sample(inputs, idx)
        return bool(np.all(np.abs(got - exp["out"]) <= tol["out"]))

    def one_each(configured):
        def run(i):
            for p in range(offsets.size - 1):
                lo, hi = int(offsets[p]), int(offsets[p + 1])
                if hi > lo:
                    (kc if configured else k[64, THREADS])(
                        d["x"][lo:hi], out[lo:hi], inputs["a"][p], inputs["b"][p])
        return run

    def batched_with(kernel):
        return lambda i: kernel[offsets.size - 1, THREADS](d["x"], d["offsets"], d["a"], d["b"],
                                                            out)
    groups = [("2,000 launches, k[grid, block] each time", one_each(False)),
              ("2,000 launches of a configured kernel reused", one_each(True)),
              ("one launch, a block per problem (course)", batched_with(reference_batched()))]
    if batched_kernel is not None:
        groups.append(("one launch, a block per problem (yours)", batched_with(batched_kernel)))
    for label, fn in groups:
        out.copy_to_device(np.full(total, np.nan, np.float32))
        # Host-bound loops are timed on the host's clock, the rest with events.
        if label.startswith("2,000"):
            fn(0)
            cuda.synchronize()
            ms = _wall_ms(lambda: (fn(0), cuda.synchronize()), 5)
        else:
            ms = timing.time_gpu(label, fn, repeats=repeats).median_ms
        rows.append({"label": label, "ms": ms, "gbps": nbytes / ms / 1e6, "right": check(),
                     "group": "launches"})

    # -- ILP against occupancy
    n = ILP_SPEED
    x = cuda.to_device(np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32))
    y = cuda.device_array(n, np.float32)
    a, b = np.float32(0.999), np.float32(0.001)
    host_x = x.copy_to_host()
    variants = [("one element per thread, n threads (course)", reference_one_each(),
                 (n + THREADS - 1) // THREADS),
                ("four elements per thread, n / 4 threads (course)", reference_ilp(),
                 ilp_blocks(n, THREADS))]
    if ilp_kernel is not None:
        variants.append(("four elements per thread (yours)", ilp_kernel, ilp_blocks(n, THREADS)))
    for label, kern, blocks in variants:
        y.copy_to_device(np.full(n, np.nan, np.float32))
        stats = timing.time_gpu(label, lambda i, kern=kern, blocks=blocks:
                                kern[blocks, THREADS](x, y, a, b), repeats=repeats,
                                nbytes=8 * n)
        rows.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps,
                     "right": _right(y.copy_to_host(), host_x, a, b), "group": "ilp"})

    # -- unified memory: the first touch by the GPU after the host wrote the pages
    m = cuda.managed_array(n, np.float32)
    m_out = cuda.managed_array(n, np.float32)
    ka = reference_axpb()
    blocks = (n + THREADS - 1) // THREADS
    timings = {"first": [], "again": []}
    for r in range(3):
        m[:] = host_x             # the host writes every page: they now live on the host
        m_out[:] = 0
        cuda.synchronize()
        for key in ("first", "again"):
            start, end = cuda.event(), cuda.event()
            start.record()
            ka[blocks, THREADS](m, m_out, a, b)
            end.record()
            end.synchronize()
            timings[key].append(cuda.event_elapsed_time(start, end))
    ok = _right(np.asarray(m_out), host_x, a, b)
    for key, label in (("first", "managed memory, first kernel after the host wrote it"),
                       ("again", "managed memory, the same kernel again")):
        ms = float(np.median(timings[key]))
        rows.append({"label": label, "ms": ms, "gbps": 8 * n / ms / 1e6, "right": ok,
                     "group": "managed"})
    return rows


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): each row of
    :func:`measure` as a bar. Without rows, the course's own run recorded on the H200
    (``h200_ch22_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    return {"name": CHART, "rows": [{"label": r["label"], "ms": r["ms"], "right": r["right"]}
                                    for r in rows],
            "title": "Chapter 22: pipeline, launches, ILP, managed memory"}


def time_cpu(n: int = 1 << 22, seed: int = 22) -> list[dict]:
    """The host's own a·x + b on ``n`` floats (NumPy, one core), for scale: label, ms, GB/s."""
    from autograder.machine import timing
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    out = np.empty_like(x)
    a, b = np.float32(0.999), np.float32(0.001)
    stats = timing.time_cpu("NumPy a * x + b (1 core)", lambda: np.add(a * x, b, out=out),
                            repeats=5, nbytes=8 * n)
    return [{"label": stats.label, "ms": stats.median_ms, "gbps": stats.gbps,
             "right": _right(out, x, a, b)}]


__all__ = ["CALLS", "CALL_KINDS", "CALL_SIZES", "CHART", "ILP", "TIMELINE", "call_bars",
           "call_costs", "call_kind", "calls_table", "chart", "cpu_mode_table", "draw_timeline",
           "launch_overhead", "measure", "measure_pipeline", "overlap", "record_calls",
           "record_timelines", "recorded_calls", "reference_ilp", "show_calls", "show_cpu_mode",
           "show_recorded_timelines", "stamps_to_rows", "time_cpu", "timeline", "try_pipeline"]
