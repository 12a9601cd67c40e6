"""Chapter 22's graded exercises. One float32 operation throughout, ``out = a · x + b``, judged
within ``γ_2 · (|a · x| + |b|)`` of the float64 value (a product and a sum, fused or not); what
changes is how the work reaches the GPU:

- 22.1 ``pipeline`` (:class:`PipelineProblem`): a host function ``pipeline(x, out, a, b, chunks,
  streams)``: ``x`` and ``out`` are host arrays in pinned memory; the function processes ``x``
  in ``chunks`` pieces over ``streams`` CUDA streams (copy in, kernel, copy back, each piece on
  stream ``i % streams``). Besides the values, the grader watches the copies and waits of the
  call (:class:`StreamTrace`): ``x`` reaches the device in exactly ``chunks`` copies, each copy is
  queued on a stream, at least ``min(chunks, streams)`` streams are used, nothing else is copied
  to the device, results come back only into ``out``, and the function does not wait for a chunk
  before queuing the next one (what makes the pieces serial);
- 22.2 ``batched``: many small problems of different lengths in one launch: ``x`` float32
  [total], ``offsets`` int64 [P + 1] (problem p is ``x[offsets[p]:offsets[p + 1]]``, possibly
  empty), ``a``, ``b`` float32 [P]; launched as P blocks (a block per problem);
- 22.3 ``ilp``: ``x`` float32 [n], ``a``, ``b`` float32 scalars, launched with a quarter of the
  threads there are elements (``ILP`` = 4 elements per thread).
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import GUARD, TINY32, Outcome, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.machine import device
from autograder.problems.ch22.references import (ILP, reference_batched, reference_ilp,
                                                 reference_pipeline)
from autograder.problems.kit.inputs import random_floats

# ---- the operation, its spec and its tolerance -------------------------------------------------------


def axpb_tolerance(x, a, b) -> np.ndarray:
    """|error| ≤ γ_2 · (|a·x| + |b|): a float32 product and sum (two roundings, or one when
    fused), plus the smallest normal float32 for results near zero."""
    x, a, b = (np.asarray(v, np.float64) for v in (x, a, b))
    return gamma(2) * (np.abs(a * x) + np.abs(b)) + TINY32


def _coefficients(rng, count=None):
    """a and b of random signs and scales (10^-2 .. 10^2): no value makes out = x or out = 0."""
    size = () if count is None else count
    a = rng.choice([-1.0, 1.0], size) * 10.0 ** rng.uniform(-2, 2, size)
    b = rng.choice([-1.0, 1.0], size) * 10.0 ** rng.uniform(-2, 2, size)
    if count is None:
        return np.float32(a), np.float32(b)
    return a.astype(np.float32), b.astype(np.float32)


VALUE_HINT = ("out[i] = a · x[i] + b: the element's own x (not the chunk's or the problem's "
              "first), the scalars as passed, and every element, the last partial piece's too.")


# ---- 22.1 the pipeline: chunks over streams, from pinned memory -----------------------------------

# Visible: n = 1000 in 7 chunks over 3 streams (chunks of 143 and 142: not a multiple of
# anything), 37 in 5 over 2, and 1 element in 1 chunk on 1 stream. Hidden: 4,000 elements (4
# times the largest visible), 2, 97 and two random sizes, with chunk and stream counts drawn
# per case (chunks 1 to 12, never more than n; streams 1 to 4). A GPU adds 2^24 + 3.
PIPELINE_VISIBLE = {1000: (7, 3), 37: (5, 2), 1: (1, 1)}
PIPE_CPU = Sizes(visible=(1000, 37, 1), hidden=(4000, 2, 97), hidden_random=(2, 3, 3000))
PIPE_GPU = Sizes(visible=(1000, 37, 1), hidden=(4000, 2, 97, (1 << 24) + 3),
                 hidden_random=(2, 3, 1 << 20))


def pipeline_inputs(rng, n) -> dict:
    n = int(n)
    x = random_floats(rng, n)
    a, b = _coefficients(rng)
    if n in PIPELINE_VISIBLE:
        chunks, streams = PIPELINE_VISIBLE[n]
    else:
        chunks = int(rng.integers(1, min(n, 12) + 1))
        streams = int(rng.integers(1, 5))
    return {"x": x, "a": a, "b": b, "chunks": chunks, "streams": streams}


def _pipeline_spec(x, a, b, chunks, streams, **launch):
    return {"out": float(a) * x + float(b)}


def _pipeline_tolerance(inputs, expected):
    return {"out": axpb_tolerance(inputs["x"], inputs["a"], inputs["b"])}


def _pipeline_outputs(n):
    return {"out": ((int(n),), np.float32)}


def _pipeline_call(pipeline, inputs, outputs, case):
    pipeline(inputs["x"], outputs["out"], inputs["a"], inputs["b"], inputs["chunks"],
             inputs["streams"])


def _pipeline_label(n) -> str:
    return f"n = {n}"


class StreamTrace:
    """What one call of a pipeline does with copies, streams, waits and kernels, watched through
    Numba's own functions (``cuda.to_device``, a device array's ``copy_to_device`` and
    ``copy_to_host``, ``cuda.synchronize``, a stream's ``synchronize``, kernel launches) while
    the call runs, and judged afterwards by :meth:`verdict`.

    ``x`` and ``out`` are the exercise's host arrays; a copy is placed by its host address. In CPU
    mode a copy back is synchronous, so what it delivered is kept and compared with ``out`` after
    the call (a value written by the host afterwards is caught); on a GPU the copies are
    asynchronous and only their places, streams and order are checked."""

    def __init__(self, x: np.ndarray, out: np.ndarray, course: bool = False):
        self.x, self.out = x, out
        self.course = course        # the course's own pipeline, checked by the course's tests
        self.copies_in: list[tuple[int, int, int]] = []     # (start, stop, stream id or 0)
        self.copies_out: list[tuple[int, int, int]] = []
        self.delivered: list[tuple[int, np.ndarray]] = []   # CPU mode: (start, values)
        self.other_in = 0           # copies to the device from another host array
        self.other_out = 0          # copies back into another host array
        self.waits: list[tuple[int, int]] = []   # (stream id or 0 for the device, copies in then)
        self.last_stream_of_chunk: list[int] = []
        self.launches: list[tuple[str, bool]] = []
        self.launch_streams: list[int] = []      # the learner's launches: stream id or 0
        self._busy = 0
        self._saved: list = []

    # -- where a host array lies ------------------------------------------------------------
    @staticmethod
    def _address(ary) -> int | None:
        try:
            return int(np.asarray(ary).__array_interface__["data"][0])
        except Exception:           # not a host array
            return None

    def _place(self, base: np.ndarray, ary) -> tuple[int, int] | None:
        addr = self._address(ary)
        if addr is None:
            return None
        lo = self._address(base)
        item = base.dtype.itemsize
        size = int(np.asarray(ary).size)
        if lo <= addr and addr + size * item <= lo + base.size * item and (addr - lo) % item == 0:
            start = (addr - lo) // item
            return start, start + size
        return None

    @staticmethod
    def _stream_id(stream) -> int:
        if not stream:
            return 0
        handle = getattr(stream, "handle", None)
        if handle is not None:
            try:
                value = handle.value if hasattr(handle, "value") else int(handle)
            except (TypeError, ValueError):
                value = -1
            if value in (None, 0, 1, 2):
                return 0            # a default stream (the legacy or the per-thread one)
        return id(stream)

    # -- events --------------------------------------------------------------------------------
    @staticmethod
    def _effective(device_array, stream):
        """The stream a device array's copy runs on: the one passed, else the one the array was
        made on (Numba's rule: ``cuda.to_device(a, stream=s)`` and ``device_array(...,
        stream=s)`` make arrays whose later copies go on ``s`` when no stream is given)."""
        return stream or getattr(device_array, "stream", 0)

    def _h2d(self, ary, stream) -> None:
        if self._busy or hasattr(ary, "__cuda_array_interface__") or \
                getattr(ary, "__cuda_ndarray__", False):
            return                  # inside another hook, or a device-to-device copy
        where = self._place(self.x, ary)
        if where is None:
            self.other_in += 1
            return
        sid = self._stream_id(stream)
        self.copies_in.append((*where, sid))
        self.last_stream_of_chunk.append(sid)

    def _d2h(self, device_array, ary, stream, result=None) -> None:
        if self._busy:
            return
        where = None if ary is None else self._place(self.out, ary)
        if where is None:
            self.other_out += 1
            return
        self.copies_out.append((*where, self._stream_id(self._effective(device_array, stream))))
        if not device.current().is_gpu:
            self.delivered.append((where[0], np.array(np.asarray(ary), copy=True).reshape(-1)))

    def _wait(self, stream) -> None:
        if not self._busy:
            self.waits.append((self._stream_id(stream), len(self.copies_in)))

    def _launch(self, fn, stream=0) -> None:
        from autograder.grading.provenance import is_learner_code, trusted_roots
        mine = is_learner_code(fn, trusted_roots())
        self.launches.append((getattr(fn, "__name__", "?"), mine))
        if mine and stream is not None:        # None: configured before the call, unseen
            self.launch_streams.append(self._stream_id(stream))

    # -- installing the hooks ---------------------------------------------------------------
    def _patch(self, owner, name, make) -> None:
        old = getattr(owner, name)
        self._saved.append((owner, name, old))
        setattr(owner, name, make(old))

    def __enter__(self):
        import numba.cuda
        trace = self

        def hooked(record):
            def make(old):
                def call(*args, **kwargs):
                    record(*args, **kwargs)
                    trace._busy += 1
                    try:
                        return old(*args, **kwargs)
                    finally:
                        trace._busy -= 1
                return call
            return make

        if device.current().is_gpu:
            from numba.cuda import dispatcher
            from numba.cuda.cudadrv import devicearray, driver
            arrays = devicearray.DeviceNDArrayBase
            self._patch(dispatcher.CUDADispatcher, "call", hooked(
                lambda disp, args, config, *a, **k: self._launch(
                    disp.py_func, getattr(config, "stream", 0))))
            self._patch(driver.Stream, "synchronize", hooked(lambda s: self._wait(s)))
        else:
            from numba.cuda.simulator import api, kernel
            from numba.cuda.simulator.cudadrv import devicearray
            arrays = devicearray.FakeCUDAArray

            def on_kernel(k, *args):
                if not k._device and not kernel._kernel_context:
                    self._launch(k.fn, getattr(k, "_aag_stream", None))

            # The simulator drops a launch's stream (k[grid, block, stream]); kept here, so that
            # a launch on the default stream is seen as a GPU would run it.
            def configure(old):
                def call(k, configuration):
                    made = old(k, configuration)
                    target = made if made is not None else k
                    target._aag_stream = configuration[2] if len(configuration) >= 3 else 0
                    return made
                return call
            self._patch(kernel.FakeCUDAKernel, "__getitem__", configure)
            self._patch(kernel.FakeCUDAKernel, "__call__", hooked(on_kernel))
            self._patch(api.stream, "synchronize", hooked(lambda s: self._wait(s)))
            # The simulator's to_device forgets its stream; a GPU's array keeps it for its
            # later copies (see _effective): kept here as well, so both judge alike.
            def to_device(old):
                def call(ary, stream=0, *a, **k):
                    self._h2d(ary, stream)
                    trace._busy += 1
                    try:
                        made = old(ary, stream, *a, **k)
                    finally:
                        trace._busy -= 1
                    if stream and made is not None and hasattr(made, "stream"):
                        made.stream = stream
                    return made
                return call
            self._patch(numba.cuda, "to_device", to_device)
        self._patch(arrays, "copy_to_device", hooked(
            lambda d, ary, stream=0: self._h2d(ary, self._effective(d, stream))))

        def copy_back(old):
            def call(d, ary=None, stream=0):
                result = old(d, ary, stream)
                self._d2h(d, ary, stream, result)
                return result
            return call
        self._patch(arrays, "copy_to_host", copy_back)
        self._patch(numba.cuda, "synchronize", hooked(lambda: self._wait(None)))
        return self

    def __exit__(self, *exc):
        while self._saved:
            owner, name, old = self._saved.pop()
            setattr(owner, name, old)
        return False

    # -- the verdict ------------------------------------------------------------------------
    def verdict(self, n: int, chunks: int, streams: int) -> str | None:
        """One sentence on what is wrong with how the call moved its data, or None."""
        own = [name for name, mine in self.launches if mine or self.course]
        foreign = sorted({name for name, mine in self.launches if not (mine or self.course)})
        if not own:
            return ("no kernel of yours ran during the call: the result was computed some other "
                    "way (on the host, or by the course's or a library's kernel)")
        if foreign:
            return (f"a kernel that is not yours ran during the call ({', '.join(foreign)}): the "
                    "pipeline must launch your own kernel")
        if self.other_in:
            return (f"{self.other_in} cop{'y' if self.other_in == 1 else 'ies'} to the device "
                    "came from a host array that is not a piece of `x` (a result computed on the "
                    "host?): only the pieces of `x` go in")
        if self.other_out:
            return (f"{self.other_out} cop{'y' if self.other_out == 1 else 'ies'} back to the host "
                    "went somewhere other than a piece of `out`: results go straight into `out`")
        if len(self.copies_in) != chunks:
            return (f"`x` went to the device in {len(self.copies_in)} "
                    f"cop{'y' if len(self.copies_in) == 1 else 'ies'}, not in the `chunks` = "
                    f"{chunks} pieces asked for")
        covered = np.zeros(n, np.int64)
        for start, stop, _ in self.copies_in:
            covered[start:stop] += 1
        if not np.all(covered == 1):
            k = int(np.flatnonzero(covered != 1)[0])
            return (f"`x[{k}]` went to the device {int(covered[k])} times: the pieces must cover "
                    "`x` once each")
        back = np.zeros(n, np.int64)
        for start, stop, _ in self.copies_out:
            back[start:stop] += 1
        if not np.all(back >= 1):
            k = int(np.flatnonzero(back == 0)[0])
            return (f"`out[{k}]` was never the target of a copy back from the device: its value "
                    "was written on the host, so it is not the kernel's")
        unqueued = [i for i, (_, _, sid) in enumerate(self.copies_in) if sid == 0]
        if unqueued:
            return (f"piece {unqueued[0]}'s copy to the device was not queued on a stream (no "
                    "`stream=`): a copy on the default stream waits for everything before it, so "
                    "nothing overlaps")
        back = [i for i, (_, _, sid) in enumerate(self.copies_out) if sid == 0]
        if back:
            return (f"a copy back to `out` (the {back[0] + 1}. one) was not queued on a stream: "
                    "without `stream=` it waits for the GPU to finish everything")
        if 0 in self.launch_streams:
            k = self.launch_streams.index(0)
            return (f"your kernel's {k + 1}. launch had no stream (`kernel[blocks, threads]`): on "
                    "the default stream it waits for the work of every other stream, and they "
                    "wait for it, so nothing overlaps; launch it as `kernel[blocks, threads, s]`")
        used = len({sid for _, _, sid in self.copies_in})
        if used < min(chunks, streams):
            return (f"the pieces went over {used} stream{'s' * (used != 1)}, not the "
                    f"min(chunks, streams) = {min(chunks, streams)} asked for")
        for sid, queued in self.waits:
            if 0 < queued < chunks and (sid == 0 or sid == self.last_stream_of_chunk[queued - 1]):
                what = "the device" if sid == 0 else "the stream of piece " + str(queued - 1)
                return (f"the pipeline waited for {what} after queuing piece {queued - 1} and "
                        f"before queuing piece {queued}: each piece then runs alone (serial), "
                        "so no copy overlaps a kernel; wait once, after the last piece is queued")
        for start, values in self.delivered:
            got = self.out[start:start + values.size]
            same = (got == values) | (np.isnan(got) & np.isnan(values))
            if not np.all(same):
                k = start + int(np.flatnonzero(~same)[0])
                return (f"`out[{k}]` was changed on the host after it was copied back from the "
                        "device: the result must be the kernel's")
        return None


def _wait_for_the_gpu(limit: float) -> None:
    """Wait for everything queued, on any stream; give up after ``limit`` seconds (a kernel that
    never returns)."""
    import time
    from numba import cuda
    if device.current().is_gpu:
        done = cuda.event()
        done.record()
        deadline = time.monotonic() + limit
        while not done.query():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the GPU was still busy after {limit:.0f} s")
            time.sleep(1e-3)
    cuda.synchronize()


class PipelineProblem(Problem):
    """A host function over pinned host arrays: the learner's function moves the data itself.

    :meth:`run_here` gives it ``x`` (a copy of the case's input) and ``out`` (NaN-poisoned, with
    a guard zone) in pinned memory (``cuda.pinned_array``; plain NumPy arrays in CPU mode, where
    the simulator's pinned arrays are ordinary ones) and watches the call with a
    :class:`StreamTrace`; what it finds wrong fails the case after the values (as the provenance
    of other exercises does)."""

    def run_here(self, submission, case, forget_inputs: bool = False) -> Outcome:
        import time
        import traceback
        from numba import cuda
        n = int(case.size)
        t0 = time.perf_counter()
        outcome = Outcome()
        try:
            x = cuda.pinned_array(n, np.float32)
            x[:] = case.inputs["x"]
            buf = cuda.pinned_array(n + GUARD, np.float32)
            buf[:] = np.nan
            out = buf[:n]
            args = {k: v for k, v in case.inputs.items() if k != "x"}
            if forget_inputs:
                case.inputs["x"] = None
            # The course's own pipeline may launch the course's kernels when the course's tests
            # run it; never in the judge's student process (forget_inputs), where a submission
            # that is the course's pipeline would otherwise pass.
            from autograder.grading.provenance import is_course_code
            course = not forget_inputs and is_course_code(submission)
            with StreamTrace(x, out, course) as trace:
                self.launch(submission, {"x": x, **args}, {"out": out}, case)
                _wait_for_the_gpu(self.time_limit(case))
            outcome.outputs = {"out": np.array(out, copy=True)}
            outcome.guard_intact = {"out": bool(np.isnan(buf[n:]).all())}
            # Judged after the values (judge below): how the call moved its data.
            outcome.provenance = {"streams": trace.verdict(n, int(args["chunks"]),
                                                           int(args["streams"]))}
        except Exception as exc:  # learner code may raise anything; report it
            kind = "cuda" if type(exc).__name__.startswith("Cuda") else "exception"
            outcome.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            outcome.error_kind = kind
        outcome.seconds = time.perf_counter() - t0
        return outcome


STREAMS_HINT = ("queue piece i's copy in, kernel and copy back on stream i % streams: "
                "`cuda.to_device(x[lo:hi], stream=s)` (or a device buffer's `copy_to_device(..., "
                "stream=s)`), the launch `kernel[blocks, threads, s](...)`, and "
                "`d_out.copy_to_host(out[lo:hi], stream=s)` straight into `out`; exactly `chunks` "
                "pieces that cover x once; wait (`cuda.synchronize()`) once, after the last piece "
                "is queued.")


def _judge_streams(self, case, outcome, show_inputs: bool = True):
    """The values first; then, when they are right, what the call did with its copies."""
    from autograder.core.checks import Verdict
    verdict = Problem.judge(self, case, outcome, show_inputs)
    why = (getattr(outcome, "provenance", None) or {}).get("streams")
    if verdict.passed and outcome.error is None and why:
        from autograder.grading.problem import PROVENANCE_HINT
        kernels = why.startswith(("no kernel", "a kernel that is not"))
        return Verdict(self.name, False, case.describe(), why,
                       PROVENANCE_HINT if kernels else STREAMS_HINT)
    return verdict


PipelineProblem.judge = _judge_streams

pipeline = PipelineProblem(
    "pipeline", title="A chunked pipeline: copies and kernels of many pieces over CUDA streams",
    spec=_pipeline_spec, make_inputs=pipeline_inputs, outputs=_pipeline_outputs,
    tolerance=_pipeline_tolerance, launch=_pipeline_call, on_device=False,
    cpu_sizes=PIPE_CPU, gpu_sizes=PIPE_GPU, size_label=_pipeline_label,
    reference=lambda: reference_pipeline, value_hint=VALUE_HINT + (
        " Piece i is x[start:stop] with the bounds of chunk_bounds(n, chunks) or your own: the "
        "pieces must cover x exactly once, the last one included."),
)


# ---- 22.2 fewer launches: many small problems in one ----------------------------------------------

def problems_of(size) -> tuple[int, int]:
    """(P problems, total elements) from a case's size."""
    return int(size[0]), int(size[1])


def batched_inputs(rng, size) -> dict:
    """``total`` elements cut into P problems at random places (some empty, one much longer than
    a block, lengths all different), with their own a and b."""
    p, total = problems_of(size)
    cuts = np.sort(rng.integers(0, total + 1, max(p - 1, 0)))
    if p >= 3:
        cuts[0] = 0                              # problem 0 is empty
    offsets = np.concatenate([[0], cuts, [total]]).astype(np.int64)
    a, b = _coefficients(rng, p)
    return {"x": random_floats(rng, total), "offsets": offsets, "a": a, "b": b}


def batched_speed_inputs(rng, size) -> dict:
    return batched_inputs(rng, size)


def _batched_expected(x, offsets, a, b):
    lengths = np.diff(offsets)
    return (np.repeat(np.asarray(a, np.float64), lengths), np.repeat(np.asarray(b, np.float64),
                                                                     lengths))


def _batched_spec(x, offsets, a, b, **launch):
    ar, br = _batched_expected(x, offsets, a, b)
    return {"out": ar * x + br}


def _batched_tolerance(inputs, expected):
    ar, br = _batched_expected(**inputs)
    return {"out": axpb_tolerance(inputs["x"], ar, br)}


def batched_sample(inputs, idx):
    """out's expected values and tolerances at flat indices ``idx`` only (the speed test)."""
    idx = np.asarray(idx, np.int64)
    p = np.searchsorted(inputs["offsets"], idx, side="right") - 1
    x = inputs["x"][idx].astype(np.float64)
    a = inputs["a"][p].astype(np.float64)
    b = inputs["b"][p].astype(np.float64)
    return {"out": a * x + b}, {"out": axpb_tolerance(x, a, b)}


def _batched_outputs(size):
    return {"out": ((problems_of(size)[1],), np.float32)}


def _batched_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["x"], inputs["offsets"], inputs["a"], inputs["b"],
                                      outputs["out"])


def _batched_label(size) -> str:
    p, total = problems_of(size)
    return (f"{p} problem{'s' * (p != 1)}, {total} element{'s' * (total != 1)} in all")


def _batched_must_read(case):
    """a[p] and b[p] of an empty problem need not be read; the offsets may be searched instead
    of read one per block."""
    lengths = np.diff(case.inputs["offsets"]) if case.inputs.get("offsets") is not None else None
    if lengths is None:
        return {"offsets": False}
    return {"offsets": False, "a": lengths > 0, "b": lengths > 0}


def batched_bytes(size) -> int:
    p, total = problems_of(size)
    return 8 * total + 16 * p


def _numpy_batched(x, offsets, a, b, out):
    lengths = np.diff(offsets)
    np.add(np.repeat(a, lengths) * x, np.repeat(b, lengths), out=out)


BATCHED_BASELINES = {"numpy": Baseline("NumPy, a and b repeated per element (1 core)",
                                       _numpy_batched)}

# The speed test: 2,000 problems, 8,388,611 elements in all (lengths from 0 to tens of
# thousands, cut at random): what 2,000 separate launches would do in 2,000 × 5-10 µs.
BATCHED_SPEED = (2000, (1 << 23) + 3)

# Sizes are (P problems, total elements), cut at random places (problem 0 empty from 3 problems
# on). Visible (blocks of 32): 7 problems of 300 elements (the longest 157, five rounds of a block),
# 3 of 70, 1 of 1. Hidden: 30 of 1,200; one of 97; 6 for 4 elements (most empty); 3 of 2,500 (two
# problems of over 1,000 elements, far longer than any visible one); and random batches, over
# blocks of 32, 64 and 128. On a GPU the speed test's batch is one of the hidden ones.
BATCHED_CPU = Sizes(visible=((7, 300), (3, 70), (1, 1)), hidden=((30, 1200), (1, 97), (6, 4), (3, 2500)),
                    hidden_random=(2, 2, 60))
BATCHED_GPU = Sizes(visible=((7, 300), (3, 70), (1, 1)),
                    hidden=((30, 1200), (1, 97), (6, 4), (3, 2500), BATCHED_SPEED),
                    hidden_random=(2, 2, 100_000), speed=BATCHED_SPEED)

batched = Problem(
    "batched", title="Fewer launches: many small problems of different lengths in one launch",
    spec=_batched_spec, make_inputs=batched_inputs, outputs=_batched_outputs,
    tolerance=_batched_tolerance, launch=_batched_launch, block_sizes=(32, 64, 128),
    visible_block_size=32, blocks_for=lambda size, t: max(1, problems_of(size)[0]),
    cpu_sizes=BATCHED_CPU, gpu_sizes=BATCHED_GPU, bytes_moved=batched_bytes,
    reference=reference_batched, baselines=BATCHED_BASELINES, size_label=_batched_label,
    sample_spec=batched_sample, speed_inputs=batched_speed_inputs, must_read=_batched_must_read,
    speed_launch=lambda size: (problems_of(size)[0], 256),
    # The reference is the same design (a block per problem, a strided loop): a plain kernel runs
    # at its speed; half of it leaves room for another loop shape and the spread between runs.
    # The CPU bar: NumPy on one core, which a GPU beats by far more than 5 (to be calibrated).
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=5.0),
    value_hint=VALUE_HINT.replace("the scalars as passed", "problem p's a[p] and b[p]") + (
        " Block p owns x[offsets[p]:offsets[p + 1]], which may be empty or far longer than the "
        "block: its threads stride through it by blockDim.x."),
)


# ---- 22.3 occupancy against ILP: four elements per thread -------------------------------------------

def ilp_inputs(rng, n) -> dict:
    a, b = _coefficients(rng)
    return {"x": random_floats(rng, int(n)), "a": a, "b": b}


def _ilp_spec(x, a, b, **launch):
    return {"out": float(a) * x + float(b)}


def _ilp_tolerance(inputs, expected):
    return {"out": axpb_tolerance(inputs["x"], inputs["a"], inputs["b"])}


def _ilp_outputs(n):
    return {"out": ((int(n),), np.float32)}


def ilp_blocks(n, threads) -> int:
    """A quarter of the threads there are elements, rounded up to whole blocks."""
    return max(1, -(-int(n) // (threads * ILP)))


def _ilp_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["x"], outputs["out"], inputs["a"], inputs["b"])


def ilp_bytes(n) -> int:
    return 8 * int(n)


def _numpy_axpb(x, a, b, out):
    np.add(a * x, b, out=out)


ILP_BASELINES = {"numpy": Baseline("NumPy a * x + b (1 core)", _numpy_axpb)}

# Visible (blocks of 32, 128 elements a block): 1000 (a partial last block, a partial last
# round), 129 (one element past a whole block's 128), 1. Hidden: 4,099, 4, and random sizes, over
# blocks of 32, 64 and 128. On a GPU the speed test: 2^26 + 3 elements (537 MB moved).
ILP_SPEED = (1 << 26) + 3
ILP_CPU = Sizes(visible=(1000, 129, 1), hidden=(4099, 4), hidden_random=(2, 2, 3000))
ILP_GPU = Sizes(visible=(1000, 129, 1), hidden=(4099, 4, (1 << 24) + 3),
                hidden_random=(2, 2, 1 << 20), speed=ILP_SPEED)

ilp = Problem(
    "ilp", title="Occupancy against ILP: four independent elements per thread",
    spec=_ilp_spec, make_inputs=ilp_inputs, outputs=_ilp_outputs, tolerance=_ilp_tolerance,
    launch=_ilp_launch, block_sizes=(32, 64, 128), visible_block_size=32, blocks_for=ilp_blocks,
    cpu_sizes=ILP_CPU, gpu_sizes=ILP_GPU, bytes_moved=ilp_bytes, elementwise=True,
    reference=reference_ilp, baselines=ILP_BASELINES,
    speed_launch=lambda n: (ilp_blocks(n, 256), 256),
    # The reference is the same kernel shape; both are bound by DRAM, so a plain four-element
    # kernel runs near its speed: half of it leaves room for the spread between runs.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="numpy", min_speedup=5.0),
    value_hint=VALUE_HINT + (" The grid has a quarter of the threads there are elements: thread "
                             "t handles t, t + W, t + 2W and t + 3W, W = the grid's width "
                             "(cuda.gridsize(1)), each only if it is below n."),
)
