"""``aag bench``: the course's reference kernels against the copy ceiling, the vendors' libraries
(CuPy; PyTorch and CUB through ``cuda.compute`` where installed) and the CPU.

``aag calibrate``: the same measurements turned into speed bars for this grading machine.

Every row is timed in one process, one run: CUDA events, warm-up first, median of many launches,
inputs rotated through a pool larger than L2.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import os
import sys

import numpy as np

from autograder.grading import speed
from autograder.machine import timing
from autograder.machine.facts import gpu_facts as _device_facts
from autograder.machine.facts import peak_fp32_flops
from autograder.machine.facts import versions as _versions
from autograder.tools.goals import goals_table


def _vector_add_variants():
    """The chapter's grid-stride loop at several launch shapes, and a one-thread-per-element
    kernel."""
    from numba import cuda
    from autograder.problems import ch02

    @cuda.jit
    def one_per_element(x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] + y[i]

    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    gs = ch02.plain_grid_stride()
    variants = {}
    for per_sm in (4, 8, 16, 32):
        for threads in (256, 512):
            variants[f"grid-stride, {per_sm}×SMs blocks × {threads}"] = (
                lambda x, y, o, b=sms * per_sm, t=threads: gs[b, t](x, y, o))
    variants["one thread per element × 256"] = (
        lambda x, y, o: one_per_element[(o.size + 255) // 256, 256](x, y, o))
    return variants


def bench_vector_add(n: int, repeats: int) -> dict:
    from numba import cuda
    from autograder.problems import ch02
    nbytes = 12 * n
    pool = timing.pool_size(8 * n)
    sets = []
    for p in range(pool):
        x, y = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
        timing.fill_uniform(x, 2 * p)
        timing.fill_uniform(y, 2 * p + 1)
        sets.append((x, y))
    out = cuda.device_array(n, np.float32)
    rows = []
    ceiling = timing.copy_ceiling(nbytes, repeats=repeats)
    rows.extend(timing.copy_variants(nbytes, repeats=repeats))
    big = timing.copy_variants(8 << 30, repeats=repeats)   # does a larger copy go faster?
    rows.extend(timing.Stats(s.label + ", 8 GiB", s.median_ms, s.runs, s.best_ms, s.spread_ms,
                             s.bytes) for s in big)
    for label, launch in _vector_add_variants().items():
        s = timing.time_gpu(label, lambda i, f=launch: f(*sets[i], out), pool, repeats=repeats,
                            nbytes=nbytes)
        rows.append(s)
    # The speed test's own launch shape, as `check_speed` uses it.
    threads = 256
    blocks = timing.speed_blocks(n, threads)
    gs = ch02.reference_grid_stride()
    rows.append(timing.time_gpu(f"course reference (speed-test launch {blocks}×{threads})",
                                lambda i: gs[blocks, threads](*sets[i], out), pool,
                                repeats=repeats, nbytes=nbytes))
    try:
        import cupy as cp
        cx = [(cp.asarray(x), cp.asarray(y)) for x, y in sets]
        cout = cp.asarray(out)
        rows.append(timing.time_gpu("CuPy cp.add", lambda i: cp.add(*cx[i], out=cout), pool,
                                    repeats=repeats, nbytes=nbytes))
    except ImportError:
        pass
    baselines = speed.cpu_baselines(ch02.vector_add_grid_stride, n)
    return {"n": n, "bytes": nbytes, "ceiling": ceiling, "gpu": rows, "cpu": baselines}


# ---- every reference kernel with a speed test -------------------------------------------------

def bench_problem(problem, repeats: int = 20, seed: int = 0, cpu: bool = True,
                  variants: str | None = None) -> dict:
    """The course reference of one exercise at its speed-test size, timed exactly as the speed
    test times it (same harness: fresh inputs per call, poisoned outputs, L2 flushed), next to
    a copy of the same bytes, the vendor library (CuPy) where it has the operation, and the CPU
    baselines. Returns a row of numbers. ``variants``: a regular expression; only the bench
    variants whose label it matches are timed (all of them by default)."""
    import re
    from autograder.grading.judge import WrongAtSpeedSize, time_reference
    from autograder.problems.kit import kernels
    from autograder.problems import bench_variants
    from autograder.grading.runner import Harness, speed_inputs
    size = problem.gpu_sizes.speed
    blocks, threads = problem.speed_shape(size)
    rng = np.random.default_rng(seed)
    host = [speed_inputs(problem, 12345, c, size) for c in range(3)]
    plan = [(int(rng.integers(3)), int(rng.integers(2))) for _ in range(repeats)]
    # A number for a wrong kernel is worth nothing: each kernel passes the visible cases first,
    # and its last timed call's output is checked at the speed size (time_reference's check).
    verdict = problem.verdict(problem.reference_kernel(), problem.cases())
    if not verdict.passed:
        raise RuntimeError(f"the reference kernel of {problem.name} is wrong: {verdict}")
    def timed(kernel_problem):
        """Its time, checked at the speed size, and the builds a choosing launcher ran."""
        with kernels.choices() as chosen:
            ms = time_reference(kernel_problem, host, plan, size, blocks, threads, check=True)
        return ms, sorted(set(chosen))

    ref_ms, builds = timed(problem)
    nbytes = problem.bytes_moved(size)
    flops = problem.flops(size) if problem.flops else 0
    row = {"problem": problem.name, "title": problem.title, "size": size,
           "launch": {"blocks": blocks, "threads": threads}, "bytes": nbytes, "flops": flops,
           "reference_ms": ref_ms}
    if builds:
        row["builds"] = {"course reference": builds}
    ceiling = timing.copy_ceiling(nbytes)
    row["copy_ms"], row["copy_label"] = ceiling.median_ms, ceiling.label
    for label, factory in bench_variants(problem).items():
        if variants is not None and not re.search(variants, label):
            continue
        variant = copy.copy(problem)
        variant.reference = factory
        verdict = problem.verdict(factory(), problem.cases())
        if not verdict.passed:         # no number for a wrong kernel; the other rows go on
            row.setdefault("variant_errors", {})[label] = str(verdict)[:500]
            continue
        try:
            ms, builds = timed(variant)
        except WrongAtSpeedSize as why:
            row.setdefault("variant_errors", {})[label] = str(why)[:500]
            continue
        row.setdefault("variants", {})[label] = ms
        if builds:                 # a launcher that picks its build: say which one was timed
            row.setdefault("builds", {})[label] = builds
    torch_op = _TORCH_OPS.get(problem.name)
    if problem.vendor is not None or torch_op is not None or problem.name in _CUB_OPS:
        # The libraries' rows read the same inputs, copied to the device once for both.
        harness = Harness()
        harness.speed_setup_from_host(problem, host, 1, size)
        try:
            if problem.vendor is not None:
                try:
                    vendor = problem.vendor()
                    outs = {name: buf[:int(np.prod(problem.outputs(size)[name][0]))].reshape(
                                problem.outputs(size)[name][0])
                            for name, buf in harness.out_bufs[0].items()}
                    v = timing.time_gpu(problem.vendor_label, lambda i: vendor(
                        {**harness.masters[i % 3], **harness.scalars[i % 3]}, outs), pool=3,
                        repeats=repeats)
                    row["vendor_ms"], row["vendor_label"] = v.median_ms, problem.vendor_label
                except ImportError as why:
                    row["vendor_skipped"] = str(why)
            if torch_op is not None:
                try:
                    label, make = torch_op
                    op = make()
                    v = timing.time_gpu(label, lambda i: op(harness.masters[i % 3]), pool=3,
                                        repeats=repeats)
                    row["torch_ms"], row["torch_label"] = v.median_ms, label
                except Exception as why:          # PyTorch is not a course dependency
                    row["torch_skipped"] = f"{type(why).__name__}: {why}"[:200]
            cub_op = _CUB_OPS.get(problem.name)
            if cub_op is not None:
                try:
                    label, make = cub_op
                    op = make(harness.masters[0])
                    v = timing.time_gpu(label, lambda i: op(harness.masters[i % 3]), pool=3,
                                        repeats=repeats)
                    row["cub_ms"], row["cub_label"] = v.median_ms, label
                except Exception as why:          # cuda-cccl is a yardstick, not a dependency
                    row["cub_skipped"] = f"{type(why).__name__}: {why}"[:300]
        finally:
            harness.release()
    row["cpu"] = {b.label: b.median_ms for b in speed.cpu_baselines(problem, size)} if cpu else {}
    return row


# ---- calling a kernel from Python: what a caller sees -----------------------------------------

CALL_SIZES = (1 << 18, 1 << 20, 1 << 24)


def _host_profile(fn, calls: int = 500) -> str:
    """Where Python's time per call of ``fn`` goes: cProfile of ``calls`` calls, top functions
    by their own time (the GPU kept busy meanwhile, so no call waits for it)."""
    import cProfile
    import io
    import pstats
    from numba import cuda
    fn()
    cuda.synchronize()
    profile = cProfile.Profile()
    timing.hold_gpu(50.0)
    profile.enable()
    for _ in range(calls):
        fn()
    profile.disable()
    cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(14)
    return text.getvalue()


def bench_calls(sizes=CALL_SIZES, repeats: int = 40) -> dict:
    """Chapter 22's table of calls from Python (:func:`autograder.problems.ch22.call_costs`:
    the exercises' launches, the course's helpers, PyTorch and CuPy, an empty kernel), with CUB's
    own algorithms (``cuda.compute``) beside them, and where Python's time per call goes
    (cProfile) for an empty launch and the sum and scan helpers."""
    from numba import cuda
    from autograder.problems.ch10.references import sum_on_device
    from autograder.problems.ch11.references import scan_on_device
    from autograder.problems.ch22 import call_costs

    def cub_rows(n, arrays):
        # each built when its row is timed (storage sized for these arrays); a library that
        # fails to build becomes the row's error
        return [(op, label, lambda make=make: functools.partial(make(arrays), arrays))
                for op, (label, make) in (("sum", _CUB_OPS["reduce_sum"]),
                                          ("scan", _CUB_OPS["scan_single_pass"]),
                                          ("histogram", _CUB_OPS["histogram_private"]))]

    result = call_costs(sizes, repeats, more=cub_rows)

    @cuda.jit
    def empty(a, b):
        pass

    a = cuda.device_array(32, np.float32)
    configured = empty[1, 32]
    n = sizes[-1]
    x = cuda.device_array(n, np.float32)
    timing.fill_uniform(x, seed=23)
    y = cuda.device_array(n, np.float32)
    out = cuda.device_array(1, np.float32)
    result["profiles"] = {
        "empty kernel, Numba, configured once": _host_profile(lambda: configured(a, a)),
        "sum_on_device": _host_profile(lambda: sum_on_device(x, out)),
        "scan_on_device": _host_profile(lambda: scan_on_device(x, y))}
    return result


def _torch_ops() -> dict:
    """PyTorch's own operation for an exercise, where it has one (CUB or cuBLAS inside): the CUB
    column of ``aag bench`` on a machine with PyTorch (never a course dependency)."""
    def tensor(a):
        import torch
        return torch.as_tensor(a, device="cuda")

    def sum_():
        import torch
        out = torch.empty((), device="cuda")
        return lambda m: torch.sum(tensor(m["x"]), 0, out=out)

    def cumsum():
        import torch
        return lambda m: torch.cumsum(tensor(m["x"]), 0)

    def bincount():
        import torch
        return lambda m: torch.bincount(tensor(m["data"]), minlength=256)

    def mm():
        import torch
        return lambda m: torch.mm(tensor(m["A"]), tensor(m["B"]))

    def sort_concat():
        import torch
        return lambda m: torch.sort(torch.cat((tensor(m["A"]), tensor(m["B"]))), stable=True)

    return {"reduce_sum": ("torch.sum (CUB)", sum_),
            "scan_single_pass": ("torch.cumsum (CUB)", cumsum),
            "scan_hierarchical": ("torch.cumsum (CUB)", cumsum),
            "histogram_private": ("torch.bincount", bincount),
            "matmul_register_tiled": ("torch.mm (cuBLAS)", mm),
            "merge_tiled": ("torch.sort of A‖B, stable (CUB radix sort)", sort_concat)}


_TORCH_OPS = _torch_ops()


class CubCall:
    """One CUB algorithm built once through ``cuda.compute`` (the ``cuda-cccl`` package: CUB from
    Python), its temporary storage allocated once: each call runs the device algorithm alone, as
    ``torch.cumsum`` runs it behind PyTorch. ``make`` is a ``cuda.compute.make_*`` function,
    ``build`` its keyword arguments, ``call`` the keyword arguments of every call (arrays
    included). Not a course dependency: importing ``cuda.compute`` fails where it is missing,
    and ``aag bench`` records why."""

    def __init__(self, make, build: dict, call: dict):
        from numba import cuda
        self.algorithm = make(**build)
        self.call = call
        size = int(self.algorithm(temp_storage=None, **call))
        self.temp = cuda.device_array(max(size, 1), np.uint8)

    def __call__(self, **arrays):
        self.algorithm(temp_storage=self.temp, **{**self.call, **arrays})


def _answer_in(op, out):
    op.out = out          # where the answer lands (tests/test_bench.py checks it against NumPy)
    return op


def _cub_ops() -> dict:
    """CUB's own algorithm for an exercise, through ``cuda.compute``: the CUB column of
    ``aag bench``. Each entry: (label, make), ``make(masters)`` returns ``op(masters)``, which
    reads the inputs of the speed test (the same arrays the other columns read) and leaves its
    answer in ``op.out``."""
    def sum_(m):
        import cuda.compute as cc
        from numba import cuda
        out = cuda.device_array(1, np.float32)
        args = dict(d_in=m["x"], d_out=out, op=cc.OpKind.PLUS, h_init=np.zeros(1, np.float32))
        cub = CubCall(cc.make_reduce_into, args, {**args, "num_items": m["x"].size})
        return _answer_in(lambda m: cub(d_in=m["x"]), out)

    def scan(m):
        import cuda.compute as cc
        from numba import cuda
        out = cuda.device_array(m["x"].size, np.float32)
        args = dict(d_in=m["x"], d_out=out, op=cc.OpKind.PLUS)
        cub = CubCall(cc.make_inclusive_scan, args,
                      {**args, "init_value": None, "num_items": m["x"].size})
        return _answer_in(lambda m: cub(d_in=m["x"]), out)

    def histogram(m):
        import cuda.compute as cc
        from numba import cuda
        hist = cuda.device_array(256, np.int32)
        levels = dict(h_num_output_levels=np.array([257], np.int32),
                      h_lower_level=np.array([0], np.int32),
                      h_upper_level=np.array([256], np.int32))
        args = dict(d_samples=m["data"], d_histogram=hist, num_samples=m["data"].size, **levels)
        cub = CubCall(cc.make_histogram_even, args, args)
        return _answer_in(lambda m: cub(d_samples=m["data"]), hist)

    def sort_concat(m):
        import cuda.compute as cc
        from numba import cuda
        na, nb = m["A"].size, m["B"].size
        keys = cuda.device_array(na + nb, np.float32)
        out = cuda.device_array(na + nb, np.float32)
        arrays = dict(d_in_keys=keys, d_out_keys=out, d_in_values=None, d_out_values=None)
        cub = CubCall(cc.make_radix_sort, {**arrays, "order": cc.SortOrder.ASCENDING},
                      {**arrays, "num_items": na + nb})

        def op(m):
            keys[:na].copy_to_device(m["A"])
            keys[na:].copy_to_device(m["B"])
            cub()
        return _answer_in(op, out)

    return {"reduce_sum": ("CUB DeviceReduce::Sum (cuda.compute)", sum_),
            "scan_single_pass": ("CUB DeviceScan::InclusiveSum (cuda.compute)", scan),
            "scan_hierarchical": ("CUB DeviceScan::InclusiveSum (cuda.compute)", scan),
            "histogram_private": ("CUB DeviceHistogram::HistogramEven (cuda.compute)", histogram),
            "merge_tiled": ("CUB radix sort of A‖B, with the copies that join them (cuda.compute)",
                            sort_concat)}


_CUB_OPS = _cub_ops()


def _problem_rows_table(rows: list[dict], peak_flops: float) -> str:
    """One line per reference kernel (and per bench variant): time, GB/s and the fraction of a
    copy of the same bytes, GFLOP/s and the fraction of the FP32 peak (where the work is
    arithmetic), the vendor library, the speedup over each CPU baseline."""
    lines = ["| exercise | kernel | size | time (ms) | GB/s | of copy | GFLOP/s | of FP32 peak "
             "| vendor (ms) | vendor time / ours | PyTorch (ms) | PyTorch time / ours "
             "| CUB (ms) | CUB time / ours | speedup over CPU |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        size = (" × ".join(map(str, r["size"])) if isinstance(r["size"], (list, tuple))
                else f"{r['size']:,}")
        kernels = {"course reference": r["reference_ms"], **r.get("variants", {})}
        for i, (label, ms) in enumerate(kernels.items()):
            compute = r["flops"] and r["flops"] / r["bytes"] >= 4
            gflops = f"{r['flops'] / ms / 1e6:,.0f}" if compute else "–"
            of_peak = f"{r['flops'] / (ms * 1e-3) / peak_flops:.0%}" if compute else "–"
            vendor = (f"{r['vendor_ms']:.3f} ({r['vendor_label']})" if "vendor_ms" in r and i == 0
                      else "–")
            ratio = f"{r['vendor_ms'] / ms:.0%}" if "vendor_ms" in r else "–"
            torch_ms = (f"{r['torch_ms']:.3f} ({r['torch_label']})" if "torch_ms" in r and i == 0
                        else "–")
            torch_ratio = f"{r['torch_ms'] / ms:.0%}" if "torch_ms" in r else "–"
            cub = (f"{r['cub_ms']:.3f} ({r['cub_label']})" if "cub_ms" in r and i == 0
                   else "–")
            cub_ratio = f"{r['cub_ms'] / ms:.0%}" if "cub_ms" in r else "–"
            cpu = "; ".join(f"{c_ms / ms:,.0f}× {name}" for name, c_ms in r["cpu"].items())
            lines.append(f"| {r['problem'] if i == 0 else ''} | {label} | {size} | {ms:.3f} | "
                         f"{r['bytes'] / ms / 1e6:,.0f} | {r['copy_ms'] / ms:.0%} | {gflops} | "
                         f"{of_peak} | {vendor} | {ratio} | {torch_ms} | {torch_ratio} | {cub} | "
                         f"{cub_ratio} | {cpu} |")
    return "\n".join(lines)


def _fmt_table(result: dict) -> str:
    ceil = result["ceiling"]
    best_cpu = {b.label: b for b in result["cpu"]}
    lines = [f"vector add fp32, n = {result['n']:,} ({result['bytes'] / 1e9:.2f} GB per call, "
             f"12 B/element)",
             "| kernel | time (ms) | GB/s | of copy ceiling | " +
             " | ".join(f"speedup vs {k}" for k in best_cpu) + " |",
             "|---|---|---|---|" + "---|" * len(best_cpu)]
    for s in [ceil] + result["gpu"]:
        cells = [s.label, f"{s.median_ms:.3f}", f"{s.gbps:.0f}", f"{s.gbps / ceil.gbps:.0%}"]
        cells += [f"{b.median_ms / s.median_ms:.0f}×" for b in best_cpu.values()]
        lines.append("| " + " | ".join(cells) + " |")
    for b in result["cpu"]:
        lines.append(f"| CPU: {b.label} | {b.median_ms:.1f} | {b.gbps:.1f} | "
                     f"{b.gbps / ceil.gbps:.1%} |" + " |" * len(best_cpu))
    return "\n".join(lines)


def _stats_dict(s: timing.Stats) -> dict:
    return {"label": s.label, "median_ms": s.median_ms, "best_ms": s.best_ms,
            "iqr_ms": s.spread_ms, "runs": s.runs, "bytes": s.bytes, "gbps": s.gbps}


def _write_json(folder: str, payload: dict) -> None:
    """``bench.json`` in ``folder``, replaced whole (written beside it, then renamed)."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "bench.json")
    with open(path + ".part", "w") as f:
        json.dump(payload, f, indent=1, default=str)
    os.replace(path + ".part", path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="aag bench", description=__doc__)
    parser.add_argument("--out", help="folder for bench.json and bench.md")
    parser.add_argument("--n", type=int, default=1 << 28, help="vector-add elements (default 2^28)")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--only", nargs="*", default=None,
                        help="exercise names to bench (default: every one with a speed test); "
                             "'vector_add' is the launch-shape study of chapter 2")
    parser.add_argument("--no-cpu", action="store_true",
                        help="skip the CPU baselines (a quicker run of the GPU rows)")
    parser.add_argument("--calls", action="store_true",
                        help="also time the course's sum, scan and histogram called from Python "
                             "(device, host and end-to-end time per call, beside PyTorch, CUB "
                             "and CuPy)")
    parser.add_argument("--variants", metavar="REGEX",
                        help="time only the bench variants whose label matches (default: all; "
                             "each is checked on its exercise's visible cases first, which takes "
                             "most of a run's time)")
    parser.add_argument("--copy-cost", action="store_true",
                        help="also run chapter 2's copy-cost experiment with the reference kernel")
    parser.add_argument("--goals", metavar="BENCH_JSON",
                        help="print what the reference kernels are held to, met or not, from a "
                             "bench.json written earlier (or a file holding such runs), and stop; "
                             "no GPU needed (a run prints the same table last)")
    args = parser.parse_args(argv)
    if args.goals:
        from autograder.tools.goals import runs_in
        with open(args.goals) as f:
            for name, run in runs_in(json.load(f)).items():
                print(f"{name}:\n\n{goals_table(run)}\n")
        return 0
    try:
        timing.require_gpu("aag bench")
    except timing.NeedsGPU as why:
        print(why)
        return 2
    from autograder.problems import ALL
    facts = {"device": _device_facts(), "versions": _versions(), "cpu": timing.machine_key(),
             "cpu_cores": os.cpu_count(), "peak_fp32_flops": peak_fp32_flops()}
    print(json.dumps(facts, indent=1))
    payload = dict(facts)
    tables = []
    from autograder.core.progress import Progress
    todo = [p for p in ALL.values() if p.reference and p.gpu_sizes.speed
            and (args.only is None or p.name in args.only)]
    launch_study = args.only is None or "vector_add" in args.only
    bar = Progress(len(todo) + launch_study, "aag bench")
    if launch_study:
        bar.begin("vector add: launch shapes and copies")
        result = bench_vector_add(args.n, args.repeats)
        tables.append(_fmt_table(result))
        bar.write(tables[-1])
        payload["vector_add"] = {
            "n": result["n"], "ceiling": _stats_dict(result["ceiling"]),
            "gpu": [_stats_dict(s) for s in result["gpu"]],
            "cpu": [_stats_dict(s) for s in result["cpu"]]}
    rows = []
    for problem in todo:
        bar.begin(problem.name)
        try:
            rows.append(bench_problem(problem, repeats=min(args.repeats, 30), cpu=not args.no_cpu,
                                      variants=args.variants))
        except Exception as exc:   # one broken reference must not hide the others' numbers
            rows.append({"problem": problem.name, "error": f"{type(exc).__name__}: {exc}"})
        bar.write(json.dumps(rows[-1]))
        if args.out:               # kept as it goes: a run cut short keeps the rows it timed
            _write_json(args.out, {**payload, "references": rows, "complete": False})
    bar.close()
    good = [r for r in rows if "error" not in r]
    if good:
        tables.append("Course reference kernels at their speed-test sizes, timed as the speed "
                      "test times them:\n\n" + _problem_rows_table(good, facts["peak_fp32_flops"]))
        print(tables[-1])
    for r in rows:
        if "error" in r:
            print(f"{r['problem']}: {r['error']}")
        for label, why in r.get("variant_errors", {}).items():
            print(f"{r['problem']}: the bench kernel {label!r} is wrong, not timed: {why}")
        for label, builds in r.get("builds", {}).items():
            print(f"{r['problem']}: {label!r} chose at run time, and ran: {'; '.join(builds)}")
    payload["references"] = rows
    if args.calls:
        from autograder.problems.ch22 import calls_table
        calls = bench_calls()
        tables.append("Calling the course's kernels from Python (µs per call):\n\n" +
                      calls_table(calls["rows"]))
        print(tables[-1])
        for label, text in calls["profiles"].items():
            print(f"Python's time in {label}, by function (cProfile):\n{text}")
        payload["calls"] = calls
    tables.append("What the reference kernels are held to (yardsticks from this run):\n\n" +
                  goals_table(payload))
    print(tables[-1])
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        if args.copy_cost:
            from numba import cuda
            from autograder.learner.experiments import copy_cost
            from autograder.problems import ch02
            gs = ch02.reference_grid_stride()
            sms = cuda.get_current_device().MULTIPROCESSOR_COUNT

            def launcher(x, y, out):
                gs[min(sms * 32, (out.size + 255) // 256), 256](x, y, out)
            payload["copy_cost"] = copy_cost(launcher)
            with open(os.path.join(args.out, "h200_copy_cost.json"), "w") as f:
                json.dump({"device": facts["device"]["name"], "versions": facts["versions"],
                           "kernel": "course reference grid-stride vector add",
                           "rows": payload["copy_cost"]}, f, indent=1)
        _write_json(args.out, {**payload, "complete": True})
        with open(os.path.join(args.out, "bench.md"), "w") as f:
            f.write("\n\n".join(tables) + "\n")
    return 0


def calibrate(argv=None) -> int:
    """Write speed bars for this machine: the bar's speedup over the CPU baseline is half of what
    the course reference reaches here; the fraction of the reference stays as shipped."""
    parser = argparse.ArgumentParser(prog="aag calibrate", description=calibrate.__doc__)
    parser.add_argument("--out", default="speed_bars.json")
    parser.add_argument("--margin", type=float, default=0.5)
    args = parser.parse_args(argv)
    from autograder.problems import ALL
    bars = {}
    from autograder.core.progress import Progress
    progress = Progress(sum(bool(p.speed) for p in ALL.values()), "aag calibrate")
    for problem in ALL.values():
        if not problem.speed:
            continue
        progress.begin(problem.name)
        row = bench_problem(problem)
        label = problem.baselines[problem.speed.baseline].label
        speedup = row["cpu"][label] / row["reference_ms"]
        bars[problem.name] = {"min_fraction_of_reference": problem.speed.min_fraction_of_reference,
                              "baseline": problem.speed.baseline,
                              "min_speedup": round(speedup * args.margin, 1)}
        progress.write(f"{problem.name}: reference is {speedup:.1f}× {label} here -> bar "
                       f"{bars[problem.name]['min_speedup']}×")
    progress.close()
    with open(args.out, "w") as f:
        json.dump(bars, f, indent=1)
    print(f"wrote {args.out}; point the grader at it with AAG_SPEED_BARS={os.path.abspath(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
