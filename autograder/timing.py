"""One timing harness for learners, the grader and ``aag bench``.

GPU times: warm-up launches outside the timed region (the first one compiles), CUDA events around
each launch, the device synchronized after each, the median of many runs, inputs rotated through a
pool of buffers larger than the L2 cache (filled on the device) so no run finds its inputs cached.
Achieved GB/s is set against a device-to-device copy of the same bytes, timed in the same run.
CPU baselines are timed with ``perf_counter`` and cached per machine.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import device

SPEED_BARS_ENV = "AAG_SPEED_BARS"       # a JSON file of recalibrated bars (``aag calibrate``)
CACHE_ENV = "AAG_CACHE_DIR"


@dataclass
class Stats:
    label: str
    median_ms: float
    runs: int
    best_ms: float = 0.0
    spread_ms: float = 0.0          # interquartile range
    bytes: int = 0
    flops: int = 0

    @property
    def gbps(self) -> float:
        return self.bytes / (self.median_ms * 1e-3) / 1e9 if self.bytes else float("nan")

    @property
    def gflops(self) -> float:
        return self.flops / (self.median_ms * 1e-3) / 1e9 if self.flops else float("nan")


def _summarize(label: str, times_ms: list[float], nbytes: int = 0, flops: int = 0) -> Stats:
    q = statistics.quantiles(times_ms, n=4) if len(times_ms) >= 4 else [min(times_ms), 0, max(times_ms)]
    return Stats(label, statistics.median(times_ms), len(times_ms), min(times_ms), q[2] - q[0],
                 nbytes, flops)


class NeedsGPU(RuntimeError):
    """Timing was asked for in CPU mode, where the simulator's times mean nothing."""


def require_gpu(what: str = "Timing") -> None:
    b = device.current()
    if not b.is_gpu:
        raise NeedsGPU(f"{what} needs a GPU: this machine runs in {b.label} ({b.reason}). "
                       "The simulator runs kernels as Python threads, so its times say nothing "
                       "about a GPU.")


def time_gpu(label: str, launch: Callable[[int], None], pool: int = 1, warmup: int = 3,
             repeats: int = 30, nbytes: int = 0, flops: int = 0) -> Stats:
    """Median time of ``launch(i)`` (i picks the input set, rotating through ``pool``)."""
    require_gpu()
    from numba import cuda
    for i in range(warmup):
        launch(i % pool)
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    times = []
    for r in range(repeats):
        start.record()
        launch(r % pool)
        # Events go on the legacy default stream, which waits for work queued on the ordinary
        # (blocking) streams that cuda.stream() makes, so such work is inside the timed region.
        end.record()
        cuda.synchronize()
        times.append(cuda.event_elapsed_time(start, end))
    return _summarize(label, times, nbytes, flops)


def copy_ceiling(nbytes_moved: int, repeats: int = 20) -> Stats:
    """The device's practical bandwidth for these bytes: the best of a driver copy
    (cudaMemcpy device to device), a plain Numba copy kernel and CuPy's copy where CuPy is
    installed, each moving the same bytes (half read, half written); best run of ``repeats``.
    Its ``median_ms`` holds that best time."""
    best = None
    for s in copy_variants(nbytes_moved, repeats):
        if best is None or s.best_ms < best.best_ms:
            best = s
    return Stats(f"copy ceiling ({best.label})", best.best_ms, best.runs, best.best_ms,
                 best.spread_ms, best.bytes)


_copy_kernel = None


def copy_variants(nbytes_moved: int, repeats: int = 20) -> list[Stats]:
    require_gpu()
    from numba import cuda
    global _copy_kernel
    words = max(nbytes_moved // 8, 1 << 18)          # float32 elements per side
    src = cuda.device_array(words, dtype=np.float32)
    dst = cuda.device_array(words, dtype=np.float32)
    nbytes = 8 * words
    if _copy_kernel is None:
        @cuda.jit
        def _copy(src, dst):
            for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
                dst[i] = src[i]
        _copy_kernel = _copy
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 32
    variants = [
        time_gpu("cudaMemcpy device to device", lambda i: dst.copy_to_device(src), warmup=3,
                 repeats=repeats, nbytes=nbytes),
        time_gpu("Numba copy kernel", lambda i: _copy_kernel[blocks, 256](src, dst), warmup=3,
                 repeats=repeats, nbytes=nbytes),
    ]
    try:  # CuPy's copy kernel was the fastest copy on the H200 (4170 GB/s against 3691 for memcpy)
        import cupy as cp
        csrc, cdst = cp.asarray(src), cp.asarray(dst)
        variants.append(time_gpu("CuPy copyto", lambda i: cp.copyto(cdst, csrc), warmup=3,
                                 repeats=repeats, nbytes=nbytes))
    except ImportError:
        pass
    return variants


def l2_bytes() -> int:
    from numba import cuda
    try:
        return int(cuda.get_current_device().L2_CACHE_SIZE)
    except Exception:  # attribute missing on some drivers: assume a large L2
        return 128 << 20


def pool_size(set_bytes: int) -> int:
    """How many input sets to rotate through so that together they are twice the L2 cache."""
    return max(2, math.ceil(2 * l2_bytes() / max(set_bytes, 1)))


def free_bytes() -> int:
    from numba import cuda
    free, _total = cuda.current_context().get_memory_info()
    return int(free)


_fill_kernel = None


def fill_uniform(array, seed: int, low: float = -1.0, high: float = 1.0) -> None:
    """Fill a device array with hashed pseudo-random values in [low, high), on the device."""
    global _fill_kernel
    from numba import cuda
    if _fill_kernel is None:
        @cuda.jit
        def _fill(out, seed, low, span):
            start, stride = cuda.grid(1), cuda.gridsize(1)
            for i in range(start, out.size, stride):
                # splitmix64-style hash of (seed, i): cheap and good enough for test data
                z = (i + seed * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
                z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
                z = z ^ (z >> 31)
                out[i] = low + span * ((z >> 11) * (1.0 / 9007199254740992.0))
        _fill_kernel = _fill
    flat = array.reshape(array.size) if array.ndim > 1 else array
    _fill_kernel[1024, 256](flat, np.uint64(seed), float(low), float(high - low))


# ---- CPU baselines, cached per machine ---------------------------------------------------------

def machine_key() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.node()}|{cpu}|{os.cpu_count()} cores|numpy {np.__version__}"


def _cache_path() -> Path:
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "all-about-gpus")
    return Path(root) / "cpu-baselines.json"


def time_cpu(label: str, fn: Callable[[], None], repeats: int = 5, nbytes: int = 0, flops: int = 0,
             cache_key: str | None = None) -> Stats:
    """Median wall time of ``fn()`` after one warm-up (which also JIT-compiles Numba baselines).
    With ``cache_key``, a result measured earlier on this machine is reused."""
    path = _cache_path()
    cache: dict = {}
    key = f"{machine_key()}|{cache_key}" if cache_key else None
    if key:
        try:
            cache = json.loads(path.read_text())
            if key in cache:
                return Stats(**cache[key])
        except (OSError, ValueError, TypeError):
            cache = {}
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    stats = _summarize(label, times, nbytes, flops)
    if key:
        cache[key] = asdict(stats)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache, indent=1))
            tmp.replace(path)
        except OSError:
            pass  # a read-only home only costs re-measuring next time
    return stats


# ---- the speed test -------------------------------------------------------------------------

@dataclass
class SpeedReport:
    problem: str
    size: int
    yours: Stats
    reference: Stats
    ceiling: Stats
    baselines: list[Stats] = field(default_factory=list)
    passed: bool = False
    reason: str = ""

    def table(self) -> str:
        rows = [("yours", self.yours), ("course reference", self.reference)]
        rows += [(b.label, b) for b in self.baselines]
        lines = [f"Speed test: {self.problem}, n = {self.size:,} ({device.current().label})",
                 f"  {'':28s} {'time':>10s} {'GB/s':>8s}  {'vs yours':>9s}"]
        for label, s in rows:
            ratio = s.median_ms / self.yours.median_ms
            lines.append(f"  {label:28s} {s.median_ms:8.3f} ms {s.gbps:8.1f}  {ratio:8.2f}×")
        lines.append(f"  {'copy ceiling (same bytes)':28s} {self.ceiling.median_ms:8.3f} ms "
                     f"{self.ceiling.gbps:8.1f}")
        lines.append(f"  you reach {self.yours.gbps / self.ceiling.gbps:.0%} of the copy bandwidth")
        lines.append(("  ✓ " if self.passed else "  ✗ ") + self.reason)
        return "\n".join(lines)


def speed_bar(problem):
    """The problem's bar, or the instructor's recalibrated one from ``$AAG_SPEED_BARS``."""
    from .problem import SpeedBar
    path = os.environ.get(SPEED_BARS_ENV)
    if path and os.path.exists(path):
        bars = json.loads(Path(path).read_text())
        if problem.name in bars:
            return SpeedBar(**bars[problem.name])
    return problem.speed


def measure(problem, kernel_or_launcher, repeats: int = 30) -> SpeedReport:
    """Time a submission and the course reference on the same chip-filling inputs, same run."""
    require_gpu("The speed test")
    from numba import cuda
    from .problem import Case
    n = problem.gpu_sizes.speed
    shapes = problem.outputs(n)
    template = problem.make_inputs(np.random.default_rng(0), min(n, 1 << 16))
    arrays = {k: v for k, v in template.items() if isinstance(v, np.ndarray)}
    scalars = {k: v for k, v in template.items() if not isinstance(v, np.ndarray)}
    set_bytes = sum(np.dtype(v.dtype).itemsize * n for v in arrays.values())
    out_bytes = sum(int(np.prod(s)) * np.dtype(d).itemsize for s, d in shapes.values())
    pool = pool_size(set_bytes)
    # Shrink the problem on a small GPU rather than fail: keep a third of free memory spare.
    budget = free_bytes() * 2 // 3
    while n > (1 << 20) and pool * set_bytes + out_bytes > budget:
        n //= 2
        shapes = problem.outputs(n)
        set_bytes = sum(np.dtype(v.dtype).itemsize * n for v in arrays.values())
        out_bytes = sum(int(np.prod(s)) * np.dtype(d).itemsize for s, d in shapes.values())
        pool = pool_size(set_bytes)
    sets = []
    for p in range(pool):
        d = {}
        for k, v in arrays.items():
            d[k] = cuda.device_array(n, dtype=v.dtype)
            fill_uniform(d[k], seed=1000 * p + len(d), low=-2.0, high=2.0)
        sets.append({**d, **scalars})
    outs = {name: cuda.device_array(shape, dtype=dt) for name, (shape, dt) in shapes.items()}
    case = Case(size=n, inputs={})
    if problem.block_sizes:
        case.threads = 256
        case.blocks = speed_blocks(n, case.threads)
    nbytes = problem.bytes_moved(n)
    flops = problem.flops(n) if problem.flops else 0

    def runner(fn):
        return lambda i: problem.launch(fn, sets[i], outs, case)

    yours = time_gpu("yours", runner(kernel_or_launcher), pool, repeats=repeats, nbytes=nbytes,
                     flops=flops)
    _verify_speed_run(problem, kernel_or_launcher, case)
    reference = time_gpu("course reference", runner(problem.reference_kernel()), pool, repeats=repeats,
                         nbytes=nbytes, flops=flops)
    ceiling = copy_ceiling(nbytes)
    baselines = cpu_baselines(problem, n)
    return SpeedReport(problem.name, n, yours, reference, ceiling, baselines)


def speed_blocks(n: int, threads: int) -> int:
    """Grid for speed runs of grid-stride kernels: enough resident blocks to fill every SM."""
    from numba import cuda
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return min(sms * 32, max(1, (n + threads - 1) // threads))


def _verify_speed_run(problem, fn, case) -> None:
    """A fast wrong answer earns nothing: check the submission once more on a fresh mid-size case."""
    from .checks import CheckFailed
    check_case = problem.cases(hidden=True)[-1]
    verdict = problem.judge(check_case, problem.run(fn, check_case))
    if not verdict.passed:
        raise CheckFailed(verdict)


def cpu_baselines(problem, n: int) -> list[Stats]:
    """Each CPU baseline at size n (cached per machine: serial ones are slow)."""
    made: dict = {}

    def args() -> dict:   # made only when a baseline is not cached yet (seconds at 2^28)
        if not made:
            made.update(problem.make_inputs(np.random.default_rng(1), n))
            made.update({name: np.empty(shape, dt) for name, (shape, dt) in problem.outputs(n).items()})
        return made

    results = []
    for key, baseline in problem.baselines.items():
        results.append(time_cpu(baseline.label, lambda b=baseline: b.run(**args()),
                                repeats=5, nbytes=problem.bytes_moved(n),
                                cache_key=f"{problem.name}|{key}|{n}"))
    return results


def check_speed(problem, submission) -> None:
    """The speed cell: pass if the submission keeps up with the course reference and beats the
    named CPU baseline by the bar's factor; in CPU mode, say that this needs a GPU."""
    from .checks import CheckFailed, Verdict
    bar = speed_bar(problem)
    if not device.current().is_gpu:
        worth = os.environ.get("AAG_SPEED_WITHOUT_GPU", "full")
        msg = (f"Speed test for {problem.name} needs a GPU; this machine runs in "
               f"{device.current().label}, so nothing was timed.")
        if worth == "zero":
            raise CheckFailed(Verdict(problem.name + " (speed)", False, "CPU mode", msg,
                                      "the instructor grades speed only on a GPU."))
        print("ℹ " + msg + " (No points are at stake on this machine.)")
        return
    report = measure(problem, submission)
    fraction = report.reference.median_ms / report.yours.median_ms
    base = next((b for b in report.baselines if b.label == problem.baselines[bar.baseline].label), None)
    speedup = base.median_ms / report.yours.median_ms if base else float("inf")
    report.passed = fraction >= bar.min_fraction_of_reference and speedup >= bar.min_speedup
    report.reason = (f"{fraction:.0%} of the course reference's speed (bar: "
                     f"{bar.min_fraction_of_reference:.0%}) and {speedup:.1f}× {base.label if base else ''} "
                     f"(bar: {bar.min_speedup:g}×)")
    print(report.table())
    if not report.passed:
        raise CheckFailed(Verdict(problem.name + " (speed)", False, f"n = {report.size:,}",
                                  report.reason, "look for uncoalesced accesses, a grid too small to "
                                  "fill the GPU, or work repeated per element."))
