"""What chapter 28's notebook calls outside the graded cells: running a ring on a few ranks
(:func:`run_ring`), a picture of the ring's steps (:func:`show_ring`), the peer-copy bandwidth
cell (:func:`peer_bandwidth`), the learner's ring beside NCCL (:func:`measure_allreduce`) and a
data-parallel backward step with and without overlap (:func:`overlap_step`).

Timing needs GPUs: with fewer than two, :func:`peer_bandwidth` and :func:`measure_allreduce` say
what they cannot show (:class:`NeedsGPUs`) instead of timing a simulation.
"""

from __future__ import annotations

import os
import time

import numpy as np

from autograder.machine import device
from autograder.problems.ch28.ranks import Ranks
from autograder.problems.kit.kernels import KernelCache

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
# nccl-tests' sweep (-b 4K -e 1G -f 4): 4 KiB to 1 GiB, each size four times the last.
MESSAGE_SIZES = tuple(4 * KIB * 4 ** k for k in range(10))

# Figures from the makers' data sheets, not measurements: what a link is built to carry in one
# direction. Shown where the machine cannot measure a peer copy.
LINK_SPECS = (("NVLink 4 (H100 / H200 SXM, 18 links)", 450.0),
              ("NVLink 3 (A100 SXM, 12 links)", 300.0),
              ("PCIe 5.0 x16", 64.0),
              ("PCIe 4.0 x16", 32.0))


class NeedsGPUs(RuntimeError):
    """A measurement that needs at least two GPUs (or one GPU), and says so."""


def gpu_count() -> int:
    if not device.current().is_gpu:
        return 0
    from numba import cuda
    return len(cuda.gpus)


def _need(gpus: int, what: str) -> None:
    from autograder.core.spec import being_graded
    have = gpu_count()
    if being_graded():
        raise NeedsGPUs(f"{what} is skipped while the notebook is graded (measurements earn no "
                        "points)")
    if have < gpus:
        where = ("CPU mode: the simulator has no GPU at all" if have == 0 else
                 f"this machine has {have} GPU")
        raise NeedsGPUs(f"{what} needs {gpus} GPUs; {where}. Simulated ranks share one device, "
                        "so a copy between them crosses no link and no two GPUs work at once: "
                        "there is nothing true to time.")


# ---- running a ring --------------------------------------------------------------------------------

def run_ring(fn, ranks: int = 4, m: int = 1003, seed: int = 28, real: bool | None = None):
    """Run ``fn(ranks)`` on ``ranks`` ranks whose buffers hold small random integers (sums exact in
    float32), and return ``(before, after)``: every rank's buffer before and after, as
    ``ranks × m`` host arrays. Ranks are real GPUs where there are enough (``real=None``)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-8, 9, (ranks, m)).astype(np.float32)
    group = Ranks(list(x), real=real)
    fn(group)
    return x, np.stack(group.gather())


def ring_schedule(n: int) -> list[tuple[str, int, list[tuple[int, int, int]]]]:
    """The ring's steps: (phase, step, [(rank, chunk it sends, to rank)])."""
    steps = []
    for s in range(n - 1):
        steps.append(("reduce-scatter", s, [(r, (r - s) % n, (r + 1) % n) for r in range(n)]))
    for s in range(n - 1):
        steps.append(("all-gather", s, [(r, (r + 1 - s) % n, (r + 1) % n) for r in range(n)]))
    return steps


def contributions(n: int) -> list[np.ndarray]:
    """After each step of the ring, how many ranks' data each (rank, chunk) holds (``n × n``)."""
    held = [{(r, k): {r} for r in range(n) for k in range(n)}]
    for phase, _, moves in ring_schedule(n):
        now = {key: set(v) for key, v in held[-1].items()}
        for r, k, to in moves:
            now[(to, k)] = (now[(to, k)] | held[-1][(r, k)] if phase == "reduce-scatter"
                            else set(held[-1][(r, k)]))
        held.append(now)
    return [np.array([[len(h[(r, k)]) for k in range(n)] for r in range(n)]) for h in held]


def show_ring(n: int = 4):
    """One panel per step: for each rank (row) and chunk (column), how many ranks' data it holds;
    the reduce-scatter fills one chunk per rank up to n, the all-gather copies it around."""
    import matplotlib.pyplot as plt
    counts = contributions(n)
    titles = ["start"] + [f"{p} {s + 1}" for p, s, _ in ring_schedule(n)]
    fig, axes = plt.subplots(1, len(counts), figsize=(1.6 * len(counts), 2.2))
    for ax, c, title in zip(np.atleast_1d(axes), counts, titles):
        ax.imshow(c, vmin=1, vmax=n, cmap="Blues")
        for r in range(n):
            for k in range(n):
                ax.text(k, r, str(c[r, k]), ha="center", va="center", fontsize=7,
                        color="white" if c[r, k] == n else "black")
        ax.set_title(title, fontsize=7)
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.tick_params(labelsize=6)
    np.atleast_1d(axes)[0].set_ylabel("rank")
    fig.suptitle(f"A ring all-reduce over {n} ranks: how many ranks' data each chunk "
                 "(column) of each rank (row) holds", fontsize=8)
    fig.tight_layout()
    return fig


# ---- peer copies ------------------------------------------------------------------------------------

def peer_bandwidth(sizes=(MIB, 16 * MIB, 256 * MIB, GIB), repeats: int = 10) -> list[dict]:
    """Time copies GPU 0 → GPU 1 (a peer copy, over NVLink or PCIe), GPU 1 → GPU 0, and GPU 0 →
    GPU 0 (inside one GPU's memory, for comparison): per size, the median of ``repeats`` copies
    after one warm-up, each timed with CUDA events on the sending GPU's stream. Rows: size, what,
    ms, GB/s (10^9 bytes per second). With fewer than two GPUs, :class:`NeedsGPUs` says why."""
    from numba import cuda
    _need(2, "Timing a copy between two GPUs")
    one = Ranks([np.zeros(1, np.float32)] * 2, real=True)     # peer access on, as for the ring
    del one
    rows = []
    for nbytes in sizes:
        n = nbytes // 4
        arrays = {}
        for g in (0, 1):
            with cuda.gpus[g]:
                arrays[g] = (cuda.device_array(n, np.float32), cuda.device_array(n, np.float32))
        for what, src, dst in (("GPU 0 → GPU 1", (0, 0), (1, 0)),
                               ("GPU 1 → GPU 0", (1, 0), (0, 0)),
                               ("GPU 0 → GPU 0", (0, 0), (0, 1))):
            source, target = arrays[src[0]][src[1]], arrays[dst[0]][dst[1]]
            times = []
            with cuda.gpus[src[0]]:
                stream = cuda.stream()
                for k in range(repeats + 1):
                    start, end = cuda.event(), cuda.event()
                    start.record(stream)
                    _copy_between(target, dst[0], source, src[0], stream)
                    end.record(stream)
                    end.synchronize()
                    if k:
                        times.append(cuda.event_elapsed_time(start, end))
            ms = float(np.median(times))
            rows.append({"bytes": nbytes, "what": what, "ms": ms, "GB/s": nbytes / ms / 1e6})
        del arrays
    return rows


def _copy_between(target, target_gpu: int, source, source_gpu: int, stream) -> None:
    from numba import cuda
    from numba.cuda.cudadrv import driver
    if target_gpu == source_gpu:
        target.copy_to_device(source, stream=stream)
        return
    with cuda.gpus[target_gpu]:
        dst_ctx = cuda.current_context()
    with cuda.gpus[source_gpu]:
        src_ctx = cuda.current_context()
    driver.driver.cuMemcpyPeerAsync(driver.device_pointer(target), dst_ctx.handle,
                                    driver.device_pointer(source), src_ctx.handle,
                                    int(source.nbytes), stream.handle)


def link_figures() -> str:
    """What the makers' data sheets give for the links between GPUs (one direction)."""
    return "\n".join(f"  {name:40s} {gbs:6.0f} GB/s per direction (data sheet)"
                     for name, gbs in LINK_SPECS)


# ---- the ring beside NCCL ---------------------------------------------------------------------------

def bus_bandwidth(nbytes: float, seconds: float, ranks: int) -> tuple[float, float]:
    """nccl-tests' numbers for an all-reduce (its PERFORMANCE.md): algbw = bytes / time (GB/s),
    busbw = algbw · 2(n − 1)/n, the bytes each rank's link carries, comparable across n."""
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * 2 * (ranks - 1) / ranks


def _nccl():
    """CuPy's NCCL bindings, NVLink SHARP (NVLS) off.

    Why CuPy's: it is maintained with CuPy, its CUDA 12 and 13 wheels depend on NVIDIA's NCCL
    wheel (``nvidia-nccl-cu12``, installed with it by pip), and its single-process mode
    (``NcclCommunicator.initAll``) drives every GPU of a node from one Python process with no MPI
    (torch.distributed would need a process per GPU, and a framework the course does not use).

    ``NCCL_NVLS_ENABLE=0`` is set before NCCL is first loaded, since NCCL reads it when a
    communicator is made: NVLS needs NVLink multicast, which the machines the course is measured on
    keep off."""
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    try:
        from cupy.cuda import nccl
    except ImportError as exc:
        raise NeedsGPUs("NCCL is measured through CuPy's bindings: `pip install cupy-cuda12x` "
                        f"(or cupy-cuda13x) first ({exc})") from None
    if not getattr(nccl, "available", True):
        raise NeedsGPUs("this CuPy was built without NCCL")
    return nccl


def _nccl_allreduce_ms(gpus: int, count: int, repeats: int, warmup: int) -> float:
    import cupy
    nccl = _nccl()
    comms = nccl.NcclCommunicator.initAll(list(range(gpus)))
    bufs, streams = [], []
    for g in range(gpus):
        with cupy.cuda.Device(g):
            bufs.append(cupy.ones(count, cupy.float32))
            streams.append(cupy.cuda.Stream(non_blocking=True))
    times = []
    for k in range(warmup + repeats):
        for g in range(gpus):
            cupy.cuda.Device(g).synchronize()
        t0 = time.perf_counter()
        nccl.groupStart()
        for g in range(gpus):
            with cupy.cuda.Device(g):
                comms[g].allReduce(bufs[g].data.ptr, bufs[g].data.ptr, count, nccl.NCCL_FLOAT32,
                                   nccl.NCCL_SUM, streams[g].ptr)
        nccl.groupEnd()
        for g in range(gpus):
            streams[g].synchronize()
        if k >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    for c in comms:
        c.destroy()
    return float(np.median(times))


def _ring_ms(fn, gpus: int, count: int, repeats: int, warmup: int) -> tuple[float, bool]:
    rng = np.random.default_rng(count)
    x = rng.integers(-8, 9, (gpus, count)).astype(np.float32)
    expected = x.sum(axis=0)
    times, right = [], True
    ranks = Ranks(list(x), real=True)
    for k in range(warmup + repeats):
        if k:
            for r, row in zip(ranks, x):
                with r.device:
                    r.buf.copy_to_device(row)
        ranks.synchronize()
        t0 = time.perf_counter()
        fn(ranks)
        ranks.synchronize()
        if k >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
        if k == 0:
            right = all(np.array_equal(b, expected) for b in ranks.gather())
    return float(np.median(times)), right


def measure_allreduce(fn, gpus: int | None = None, sizes=MESSAGE_SIZES, repeats: int = 10,
                      warmup: int = 2) -> list[dict]:
    """The learner's ``fn`` (a ring all-reduce on :class:`Ranks`) beside NCCL's all-reduce on
    ``gpus`` GPUs (all of them by default), float32 buffers of each of ``sizes`` bytes (4 KiB to
    1 GiB, as nccl-tests' ``-b 4K -e 1G -f 4``): per size and implementation the median time of
    ``repeats`` calls after ``warmup``, host to host (every GPU synchronized before and after),
    with nccl-tests' algbw and busbw. Rows: bytes, impl, ms, algbw, busbw (GB/s), right. Needs
    at least two GPUs; says why otherwise (:class:`NeedsGPUs`)."""
    _need(2, "Measuring an all-reduce against NCCL")
    gpus = gpus or gpu_count()
    _need(gpus, f"An all-reduce on {gpus} GPUs")
    rows = []
    for nbytes in sizes:
        count = max(1, nbytes // 4)
        ms, right = _ring_ms(fn, gpus, count, repeats, warmup)
        rows.append({"bytes": nbytes, "impl": "your ring", "ms": ms, "right": right})
        try:
            rows.append({"bytes": nbytes, "impl": "NCCL", "ms": _nccl_allreduce_ms(
                gpus, count, repeats, warmup), "right": True})
        except NeedsGPUs as why:
            rows.append({"bytes": nbytes, "impl": "NCCL", "ms": float("nan"), "right": False,
                         "why": str(why)})
    for row in rows:
        row["algbw"], row["busbw"] = bus_bandwidth(row["bytes"], row["ms"] / 1e3, gpus)
        row["gpus"] = gpus
    return rows


def table(rows: list[dict]) -> str:
    """:func:`measure_allreduce`'s rows as a table, nccl-tests' columns."""
    lines = [f"{'size':>10} {'implementation':>15} {'time (ms)':>10} {'algbw GB/s':>11} "
             f"{'busbw GB/s':>11}"]
    for r in rows:
        size = (f"{r['bytes'] // GIB} GiB" if r["bytes"] >= GIB else f"{r['bytes'] // MIB} MiB"
                if r["bytes"] >= MIB else f"{r['bytes'] // KIB} KiB")
        lines.append(f"{size:>10} {r['impl']:>15} {r['ms']:10.3f} {r['algbw']:11.2f} "
                     f"{r['busbw']:11.2f}" + ("" if r["right"] else "  (wrong or not run)"))
    return "\n".join(lines)


# ---- overlap: a data-parallel backward step --------------------------------------------------------

cuda = float32 = None            # module globals, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def backward_kernel():
    """A stand-in for one layer's backward pass: ``grad[i]`` from ``work`` multiply-adds on
    ``act[i]`` (compute that takes a while, and a gradient that depends on the rank's data)."""
    @cuda.jit
    def backward(act, grad, work):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < grad.size:
            a = act[i]
            g = float32(0.0)
            for _ in range(work):
                g = g * float32(0.999) + a
            grad[i] = g
            i += stride
    return backward


def overlap_step(allreduce, ranks: int = 2, layers: int = 4, n: int = 1 << 22,
                 work: int = 200, overlap: bool = True, seed: int = 28) -> dict:
    """One data-parallel backward step: ``layers`` layers of ``n`` gradients on each of ``ranks``
    ranks, from the last layer to the first. Each layer's backward kernel runs on the rank's
    compute stream; its gradients are then all-reduced by ``allreduce`` (a ring with 28.1's
    contract) on the ranks' own streams. ``overlap=False``: the host waits for each backward
    kernel, then for each all-reduce, one after the other. ``overlap=True``: layer k − 1's backward
    kernel is queued before layer k's all-reduce, whose streams wait (an event) only for layer k's
    gradients, so the GPU computes one layer while the ranks exchange the last.

    Returns ms (host to host), right (every layer's all-reduced gradients checked) and what ran."""
    from numba import cuda as _cuda
    backward = backward_kernel()
    rng = np.random.default_rng(seed)
    acts = rng.integers(-3, 4, (layers, ranks, n)).astype(np.float32)
    groups = [Ranks([np.zeros(n, np.float32)] * ranks) for _ in range(layers)]
    compute = []
    d_acts = []
    for r in range(ranks):
        with groups[0][r].device:
            compute.append(_cuda.stream())
            d_acts.append([_cuda.to_device(acts[k, r]) for k in range(layers)])
    for g in groups:
        g.synchronize()
    threads = 256
    blocks = min(-(-n // threads), 4096)

    def queue_backward(k):
        events = []
        for r in range(ranks):
            with groups[k][r].device:
                backward[blocks, threads, compute[r]](d_acts[r][k], groups[k][r].buf, work)
                event = _cuda.event(timing=False)
                event.record(compute[r])
                events.append(event)
        return events

    _cuda.synchronize()
    t0 = time.perf_counter()
    if overlap:
        pending = queue_backward(layers - 1)
        for k in range(layers - 1, -1, -1):
            ready = pending
            if k > 0:
                pending = queue_backward(k - 1)        # the next layer's compute, queued first
            for r, event in zip(groups[k], ready):
                with r.device:
                    event.wait(r.stream)               # the ring waits for this layer's grads
            allreduce(groups[k])
    else:
        for k in range(layers - 1, -1, -1):
            queue_backward(k)
            for s, r in zip(compute, groups[k]):
                with r.device:
                    s.synchronize()
            allreduce(groups[k])
            groups[k].synchronize()
    for g in groups:
        g.synchronize()
    for s, r in zip(compute, groups[0]):
        with r.device:
            s.synchronize()
    ms = (time.perf_counter() - t0) * 1e3
    right = True
    for k in range(layers):
        got = np.stack(groups[k].gather())
        one = np.stack([d_acts[r][k].copy_to_host() for r in range(ranks)])
        expected = _backward_host(one, work).sum(axis=0)
        right &= bool(np.allclose(got, expected, rtol=1e-4, atol=1e-2))
    return {"label": "overlapped" if overlap else "one after the other", "ms": ms,
            "right": right, "ranks": ranks, "layers": layers, "n": n,
            "simulated": groups[0].simulated}


def _backward_host(act: np.ndarray, work: int) -> np.ndarray:
    g = np.zeros_like(act)
    for _ in range(work):
        g = g * np.float32(0.999) + act
    return g


def measure_overlap(allreduce, **kw) -> list[dict]:
    """:func:`overlap_step` without and with overlap, after one warm-up of each (on a GPU only)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the overlap of communication and computation")
    rows = []
    for overlap in (False, True):
        overlap_step(allreduce, overlap=overlap, **{**kw, "layers": 1})
        rows.append(overlap_step(allreduce, overlap=overlap, **kw))
    return rows


def main() -> None:
    """``python -c "import autograder as ag; ag.problems.ch28.notebook.main()"``: on a machine
    with two or more GPUs, the
    peer copies and the course's ring beside NCCL (4 KiB to 1 GiB), as the chapter's cells show
    them; elsewhere, why not."""
    from autograder.problems.ch28.references import reference_ring_allreduce
    try:
        for row in peer_bandwidth():
            print(f"{row['bytes'] / MIB:7.0f} MiB  {row['what']}:  {row['ms']:8.3f} ms  "
                  f"{row['GB/s']:7.1f} GB/s")
        print(table(measure_allreduce(reference_ring_allreduce)))
    except NeedsGPUs as why:
        print(why)

