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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from autograder.core.spec import being_graded
from autograder.machine import device

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
    """Timing was asked for in CPU mode, where the simulator's times mean nothing, or while the
    notebook is graded (:func:`require_gpu`)."""


def measuring() -> bool:
    """Can a notebook cell time kernels now: on a GPU, and not while the notebook is graded."""
    return not_measured() is None


def not_measured(what: str = "Timing", gpu: bool = True) -> str | None:
    """Why ``what`` is not timed here, or None where it is: CPU mode (the simulator's times mean
    nothing; not a reason for ``gpu=False``, a timing of CPU code), or a notebook run by the
    grader (a measurement earns no points, and timing every learner's experiments would cost the
    grader's GPU minutes per submission). A chapter's measuring cells ask first and show the
    course's recorded figures instead."""
    b = device.current()
    if gpu and not b.is_gpu:
        return (f"{what} needs a GPU: this machine runs in {b.label} ({b.reason}). The simulator "
                "runs kernels as Python threads, so its times say nothing about a GPU.")
    if being_graded():
        return (f"{what} is skipped while the notebook is graded: measurements earn no points, "
                "and the grader times only the speed cells. Run the cell yourself"
                + (" on a GPU" if gpu else "") + " to see the numbers.")
    return None


def require_gpu(what: str = "Timing") -> None:
    """Raise :class:`NeedsGPU`, saying why, unless timing means something here (:func:`measuring`)."""
    why = not_measured(what)
    if why:
        raise NeedsGPU(why)


_spin: dict = {}


def hold_gpu(ms: float = 0.3) -> None:
    """Keep the GPU busy for about ``ms`` with a one-thread kernel, so that a launch queued right
    after a start event reaches the GPU before the GPU reaches the event: the timed region then
    holds the kernel's own time, not Python's ~0.05–0.15 ms of launch overhead (which is as large
    as a whole memory-bound kernel on a big GPU)."""
    from numba import cuda
    if "kernel" not in _spin:
        @cuda.jit
        def spin(out, n):
            x = out[0]
            for i in range(n):
                x = (x * 1103515245 + 12345) & 0x7FFFFFFF   # dependent: cannot be skipped
            out[0] = x
        buf = cuda.to_device(np.zeros(1, np.int64))
        spin[1, 1](buf, 10)
        cuda.synchronize()
        start, end = cuda.event(), cuda.event()
        start.record()
        spin[1, 1](buf, 100_000)
        end.record()
        end.synchronize()
        per_iter_ms = max(cuda.event_elapsed_time(start, end), 1e-3) / 100_000
        _spin.update(kernel=spin, buf=buf, per_iter_ms=per_iter_ms)
    _spin["kernel"][1, 1](_spin["buf"], int(ms / _spin["per_iter_ms"]))


def time_gpu(label: str, launch: Callable[[int], None], pool: int = 1, warmup: int = 3,
             repeats: int = 30, nbytes: int = 0, flops: int = 0) -> Stats:
    """Median time of ``launch(i)`` (i picks the input set, rotating through ``pool``), from a
    start event the GPU reaches only once the launch is queued (see :func:`hold_gpu`)."""
    require_gpu()
    import time
    from numba import cuda
    queued = []
    for i in range(warmup):
        t0 = time.perf_counter()
        launch(i % pool)
        queued.append(time.perf_counter() - t0)
    cuda.synchronize()
    # The hold outlasts Python's time to queue the call (twice the slowest warm-up after the
    # first, which may compile), so a call of several launches is timed on the GPU alone.
    hold_ms = min(20.0, max(0.3, 2e3 * max(queued[1:] or queued or [0.0])))
    start, end = cuda.event(), cuda.event()
    times = []
    for r in range(repeats):
        hold_gpu(hold_ms)
        start.record()
        launch(r % pool)
        # Events go on the legacy default stream, which waits for work queued on the ordinary
        # (blocking) streams that cuda.stream() makes, so such work is inside the timed region.
        end.record()
        cuda.synchronize()
        times.append(cuda.event_elapsed_time(start, end))
    return _summarize(label, times, nbytes, flops)


def time_call(fn: Callable[[], Any], repeats: int = 40) -> dict:
    """Three figures for one call of ``fn`` (which queues GPU work and returns), medians of
    ``repeats``, in microseconds:

    - ``device_us``: the GPU's time, the GPU held busy while Python queues the call (as the speed
      tests time kernels);
    - ``host_us``: Python's time per call, calls queued back to back behind a held GPU (so no call
      waits for the GPU): the launch overhead. A call that waits for the GPU (reads a value back)
      waits here for the hold too, and shows it;
    - ``end_to_end_us``: from a CUDA event recorded on an idle GPU just before the call to one
      recorded just after it, waited for: what a caller who needs the result sees."""
    require_gpu("Timing calls")
    from numba import cuda
    for _ in range(3):
        fn()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    device, e2e = [], []
    for _ in range(repeats):
        hold_gpu(5.0)
        start.record()
        fn()
        end.record()
        end.synchronize()
        device.append(cuda.event_elapsed_time(start, end) * 1e3)
    batch = 20
    host = []
    for _ in range(max(3, repeats // batch)):
        hold_gpu(40.0)
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        host.append((time.perf_counter() - t0) / batch * 1e6)
        cuda.synchronize()
    for _ in range(repeats):
        cuda.synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        e2e.append(cuda.event_elapsed_time(start, end) * 1e3)
    return {"device_us": float(np.median(device)), "host_us": float(np.median(host)),
            "end_to_end_us": float(np.median(e2e))}


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


def cache_root() -> Path:
    """Where measurements kept per machine live (AAG_CACHE_DIR, else ~/.cache/all-about-gpus)."""
    return Path(os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "all-about-gpus"))


def kept(name: str, key: str, measure: Callable[[], Any], load: Callable[[Any], Any] = lambda v: v):
    """A measurement made once per machine and kept: the JSON file ``cache_root() / name`` maps
    ``key`` to what ``measure()`` returned (a JSON value), and ``load`` turns it back into what the
    caller uses. A missing or unreadable file, or an entry ``load`` rejects (written by an older
    version), is measured again; a home that cannot be written only costs measuring next time."""
    path = cache_root() / name
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    if key in data:
        try:
            return load(data[key])
        except (TypeError, ValueError, KeyError):
            pass
    data[key] = value = measure()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(path)
    except OSError:
        pass
    return load(value)


CPU_TIMING_SECONDS = 15.0   # what the timed runs of one CPU baseline may take together, about


def time_cpu(label: str, fn: Callable[[], None], repeats: int = 5, nbytes: int = 0, flops: int = 0,
             cache_key: str | None = None) -> Stats:
    """Median wall time of ``fn()`` after one warm-up (which also JIT-compiles Numba baselines):
    ``repeats`` runs, fewer (at least one) where the warm-up says they would take more than about
    :data:`CPU_TIMING_SECONDS` (a serial loop over 2^28 values takes seconds a run, and varies
    little from run to run). With ``cache_key``, a result measured earlier on this machine is
    reused."""
    def measure() -> Stats:
        t0 = time.perf_counter()
        fn()
        warm = time.perf_counter() - t0
        times = []
        for _ in range(max(1, min(repeats, int(CPU_TIMING_SECONDS / max(warm, 1e-9))))):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return _summarize(label, times, nbytes, flops)

    if not cache_key:
        return measure()
    return kept("cpu-baselines.json", f"{machine_key()}|{cache_key}", lambda: asdict(measure()),
                load=lambda value: Stats(**value))


def speed_blocks(n: int, threads: int) -> int:
    """Grid for speed runs of grid-stride kernels: enough resident blocks to fill every SM."""
    from numba import cuda
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return min(sms * 32, max(1, (n + threads - 1) // threads))
