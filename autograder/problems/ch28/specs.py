"""Chapter 28's graded exercises.

28.1 ``ring_allreduce``: the learner's ``ring_allreduce(ranks)`` gets ``n`` ranks
(:class:`~autograder.problems.ch28.ranks.Ranks`), rank ``r`` holding row ``r`` of the case's
float32 ``x`` (``n × m``) in its ``buf``; afterwards every rank's ``buf`` must hold the
elementwise sum of all rows. A case's size is ``(n, m)``: 1 to 8 ranks, ``m`` neither a multiple
of ``n`` nor of a block size. Judged against the float64 sum within the float32 bound of a sum of
``n`` terms in any order, ``γ_{n-1} · Σ_r |x_r|`` (exact for one rank); every rank must hold the
same bits (an all-gather copies the finished chunk, it does not add again). The receive buffers
start as NaN.

Where the answer came from (:mod:`autograder.grading.provenance`, as every chapter's kernels are
watched): no rank's array may reach the host during the call (nor any device array: a
host-side sum copies through scratch arrays too), every kernel must be launched through
``r.launch`` (so that it runs on that rank's GPU and stream, where the ordering check sees it),
and in CPU mode each element of the result must be a value the learner's kernel stored on some
rank, every rank's copy of it stored there by that kernel or copied in from another rank.

None of this reads the learner's :class:`Ranks` object (whose attributes the learner's code can
rebind): the check holds the ranks' engine (:func:`~autograder.problems.ch28.ranks.open_ranks`),
its ordering check, counts and arrays. In CPU mode, while the call runs, a rank's memory holds a
NaN decoy outside the course's own send and launch (the host, or another rank's kernel, reads
only the decoy; a write behind the ranks' back is found), a kernel gets only its rank's arrays
and numbers, and reads no mutable global or closure (the simulator's kernels are Python).

28.2 ``bus_bandwidth``: nccl-tests' numbers for an all-reduce, as a formula exercise.
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, Verdict, gamma
from autograder.grading.problem import Problem, Sizes
from autograder.machine import device
from autograder.problems.ch28.ranks import DECOY, open_ranks
from autograder.problems.kit.formula import formula_problem

# ---- 28.1: the ring all-reduce ----------------------------------------------------------------------

# (ranks, elements). Visible: 3 ranks over 301 elements (chunks of 100, 100, 101). Hidden: every
# rank count from 1 to 8 (one rank: nothing to send, the buffer is already the sum; a ring that
# special-cases the counts it expects fails another), element counts that no rank count or block
# size divides, 8 ranks over 9 elements (chunks of one and two), and 2 ranks over 2,101 (chunks
# of 1,050: more than one block of even 1,024 threads, so a kernel launched as one block without
# a grid-stride loop misses elements in CPU mode too). The simulator runs about (n - 1) · m
# additions per case, a few thousand threads: seconds.
CPU_SIZES = Sizes(visible=((3, 301),),
                  hidden=((1, 45), (2, 257), (4, 122), (5, 333), (6, 61), (8, 9), (7, 130),
                          (8, 1001), (2, 2101)))
GPU_SIZES = Sizes(visible=((3, 301), (4, 1_000_003)),
                  hidden=((1, 45), (2, 257), (4, 122), (5, 333), (6, 61), (8, 9), (7, 130),
                          (8, 1001), (2, 2101), (4, 1_000_003), (8, 3_000_017)))


def rank_inputs(rng: np.random.Generator, size) -> dict:
    """Row r of ``x`` is rank r's buffer: magnitudes over six decades and both signs, so that a
    chunk added twice, or to the wrong place, shows."""
    n, m = size
    mags = 10.0 ** rng.uniform(-3, 3, (n, m))
    return {"x": (rng.choice([-1.0, 1.0], (n, m)) * mags).astype(np.float32)}


def _spec(x, **launch):
    total = x.astype(np.float64).sum(axis=0)
    return {"out": np.broadcast_to(total, x.shape).copy()}


def _tolerance(inputs, expected):
    x = inputs["x"].astype(np.float64)
    n = x.shape[0]
    if n == 1:
        return {"out": np.zeros(x.shape)}
    bound = gamma(n - 1) * np.abs(x).sum(axis=0) + TINY32
    return {"out": np.broadcast_to(bound, x.shape).copy()}


def _label(size) -> str:
    n, m = size
    sizes = sorted({(k + 1) * m // n - k * m // n for k in range(n)})
    chunks = " or ".join(map(str, sizes))
    return f"{n} rank{'s' * (n != 1)}, buffers of {m} float32 (chunks of {chunks})"


RING_HINT = ("chunk k is elements [k·m//n, (k+1)·m//n). Reduce-scatter, step s = 0 .. n−2: rank "
             "r sends its chunk (r − s) mod n to rank r + 1, which adds it into its own chunk of "
             "that number; after it rank r holds the finished chunk (r + 1) mod n. All-gather, "
             "step s = 0 .. n−2: rank r sends chunk (r + 1 − s) mod n to rank r + 1, which copies "
             "it over its own (send(..., into=...)). A rank adds only what has arrived "
             "(wait_for its sender) and sends again only once its receiver has used its recv.")


class RingProblem(Problem):
    """28.1: the learner's function runs once per case on fresh :class:`Ranks`; what every rank's
    buffer holds afterwards is the output ``out`` (``n × m``)."""

    def __init__(self):
        super().__init__(
            "ring_allreduce", title="A ring all-reduce: reduce-scatter, then all-gather",
            spec=_spec, make_inputs=rank_inputs, tolerance=_tolerance,
            outputs=lambda size: {"out": (tuple(size), np.float32)}, launch=self._launch,
            cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES, on_device=False, size_label=_label,
            value_hint=RING_HINT)
        self._state: dict = {}          # shared with the judge's shallow copy of the problem

    def simulated_threads(self, case) -> float:
        n, m = case.size
        return max(n - 1, 1) * m * 4 + 2000 * n * n      # additions, and each launch's overhead

    # -- running (calls learner code) -----------------------------------------------------------
    def run_here(self, submission, case, forget_inputs: bool = False):
        self._state.clear()
        self._state["forget"] = forget_inputs
        outcome = super().run_here(submission, case, forget_inputs=forget_inputs)
        if "provenance" in self._state:
            outcome.provenance = self._state.pop("provenance")
        return outcome

    def _launch(self, fn, inputs, outputs, case):
        from autograder.grading import provenance
        x = inputs.pop("x")
        # The ranks for the learner, and what only this call holds of them (their arrays,
        # counts and ordering check, in the engine's closure): nothing below reads an attribute
        # of `ranks`, which the learner's code can rebind.
        ranks, audit = open_ranks(list(x))
        if self._state.get("forget"):
            case.inputs["x"] = None       # no host copy left for learner code to sum
        del x
        n, bufs, recvs = audit.size, audit.buffers, audit.receives
        gpu = device.current().is_gpu
        if gpu:
            provenance.install_gpu()
            rec = provenance.DeviceRanges(host_copies_allowed=False, device_only=True)
            for r in range(n):
                rec.add(f"rank {r}'s buf", bufs[r])
                rec.add(f"rank {r}'s recv", recvs[r])
        else:
            rec = provenance.Recorder(host_copies_allowed=False, device_only=True,
                                      course_submission=provenance.is_course_code(fn))
            for r in range(n):
                rec.add_output(f"rank {r}'s buf", bufs[r], bufs[r].shape)
                rec.add_output(f"rank {r}'s recv", recvs[r], recvs[r].shape)
        audit.begin()
        try:
            with provenance.recording(rec):
                fn(ranks)
        finally:
            behind = audit.finish()
        got = audit.gather()
        for r, values in enumerate(got):
            outputs["out"][r] = values
        self._state["provenance"] = _where_from(rec, audit, got, gpu, behind)

    # -- judging (never calls learner code) -------------------------------------------------------
    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs=False)
        n, m = case.size
        got = outcome.outputs.get("out")
        if outcome.error is not None or got is None or np.shape(got) != (n, m):
            return verdict
        if not verdict.passed:
            if verdict.index is not None:
                r, i = divmod(int(verdict.index), m)
                k = next(k for k in range(n) if i < (k + 1) * m // n)
                verdict.message += (f"\n  that is rank {r}'s buf[{i}], in chunk {k} (elements "
                                    f"{k * m // n} .. {(k + 1) * m // n - 1})")
                wrong = _wrong_chunks(case, got, self.reference_values(case))
                if wrong:
                    verdict.message += f"\n  wrong chunks per rank: {wrong}"
            return verdict
        same = np.all(got.view(np.uint32) == got[:1].view(np.uint32), axis=1)
        if not same.all():
            r = int(np.argmin(same))
            i = int(np.argmax(got[r].view(np.uint32) != got[0].view(np.uint32)))
            return Verdict(self.name, False, case.describe(),
                           f"rank 0 and rank {r} hold different bits at buf[{i}] ({got[0, i]!r} "
                           f"and {got[r, i]!r}): every rank must end with the same values",
                           "each chunk is summed once, on one rank, and the all-gather copies "
                           "that finished chunk to the others (it does not add again)")
        return verdict


def _wrong_chunks(case, got, reference) -> str:
    """'rank 0: chunks 1, 2; rank 2: chunk 0': which chunks of which ranks are wrong."""
    (expected, tolerance), (n, m) = reference, case.size
    bad = ~(np.abs(got.astype(np.float64) - expected["out"]) <= tolerance["out"])
    parts = []
    for r in range(n):
        chunks = [k for k in range(n) if bad[r, k * m // n:(k + 1) * m // n].any()]
        if chunks:
            parts.append(f"rank {r}: chunk{'s' * (len(chunks) > 1)} "
                         f"{', '.join(map(str, chunks))}")
    return "; ".join(parts[:8])


def _where_from(rec, audit, got: list[np.ndarray], gpu: bool, behind: str | None) -> dict:
    """The provenance of one call as the judge reads it (``verdict``: the first thing wrong, or
    None; ``before_values``: whether it outranks the values). ``audit``: the ranks' engine as the
    check holds it (``behind``: what it found going on behind the ranks' back)."""
    n = audit.size
    _sends, ring_launches = audit.counts()
    summary = rec.summary()
    launches = summary.get("driver_launches" if gpu else "learner_launches", 0)
    if gpu:
        message = rec.verdict()
        if message:
            return {**summary, "verdict": message, "before_values": True}
    else:
        for b in rec.buffers:
            if b.host:
                return {**summary, "verdict": (
                    f"{b.name} was {b.host[0]} by your code during the check: the ranks' arrays "
                    "stay on their GPUs, and only your kernel adds them"), "before_values": True}
        if rec.other_host:
            return {**summary, "verdict": (
                f"a device array of yours was {rec.other_host[0]} during the check: an "
                "all-reduce runs on the GPUs from start to end, nothing is read back to the host"),
                "before_values": True}
    if behind:
        return {**summary, "verdict": behind, "before_values": True}
    for r, final in enumerate(got):
        read = np.ascontiguousarray(final, np.float32).view(np.uint32) == DECOY
        if read.any():
            i = int(np.argmax(read))
            return {**summary, "verdict": (
                f"rank {r}'s buf[{i}] was computed from memory your code cannot read there: "
                "while the all-reduce runs, a rank's kernel sees only its own rank's arrays, "
                "and the host sees none of them (what it reads instead is the check's NaN "
                "decoy). Send the data, then add it with that rank's kernel"),
                "before_values": True}
    if not gpu and rec.foreign_launches:
        return {**summary, "verdict": "a kernel that is not yours (the course's or a "
                "library's) ran during the call", "before_values": True}
    if launches > ring_launches:
        return {**summary, "verdict": (
            f"{launches - ring_launches} kernel launch(es) did not go through r.launch(kernel, "
            "blocks, threads, ...): launch each rank's kernel with its rank, so that it runs on "
            "that rank's GPU and stream"), "before_values": True}
    if n > 1 and ring_launches == 0:
        return {**summary, "verdict": "no kernel of yours was launched: the additions are your "
                "kernel's to do", "before_values": True}
    if not gpu and n > 1:
        message = _stored_or_copied(rec, n, got)
        if message:      # after the values: a plain bug hears about its values first
            return {**summary, "verdict": message, "before_values": False}
    return {**summary, "verdict": None, "before_values": False}


def _stored_or_copied(rec, n: int, got: list[np.ndarray]) -> str | None:
    """CPU mode: every element of every rank's buffer was last stored by a thread of the
    learner's kernel (and still holds what it stored) or copied in by a send; and each element's
    final value is one the learner's kernel stored at that element on some rank."""
    from autograder.grading.provenance import COPIED, FOREIGN

    def bits(a):
        return np.ascontiguousarray(a, np.float32).view(np.uint32)

    bufs = {b.name: b for b in rec.buffers}
    m = got[0].shape[0]
    stored_somewhere = np.zeros(m, bool)
    for r, final in enumerate(got):
        b = bufs[f"rank {r}'s buf"]
        who, value = b.who[:m], b.value[:m]
        if (who == FOREIGN).any():
            i = int(np.argmax(who == FOREIGN))
            return f"rank {r}'s buf[{i}] was written by a kernel that is not yours"
        mine = who >= 0
        changed = mine & (bits(value) != bits(final))
        if changed.any():
            i = int(np.argmax(changed))
            return (f"rank {r}'s buf[{i}] was changed after your kernel stored it, by "
                    "something that is neither your kernel nor a send")
        untouched = ~mine & (who != COPIED)
        if untouched.any():
            i = int(np.argmax(untouched))
            return (f"rank {r}'s buf[{i}] was neither stored by your kernel nor copied in "
                    "from another rank: it still holds the rank's own input (or something the "
                    "host put there)")
        stored_somewhere |= mine & (bits(value) == bits(got[0]))
    if not stored_somewhere.all():
        i = int(np.argmin(stored_somewhere))
        return (f"the sum at buf[{i}] was never stored by a thread of your kernel on any rank: "
                "every value of the result comes from your kernel's additions")
    return None


ring_allreduce = RingProblem()


# ---- 28.2: what nccl-tests reports ----------------------------------------------------------------

def _bw_inputs(rng, count):
    return {"nbytes": rng.choice([4096, 1 << 20, 3 << 20, 1 << 27, 1 << 30], count).astype(float)
            * rng.integers(1, 4, count),
            "seconds": 10.0 ** rng.uniform(-5.5, -1, count),
            "ranks": rng.integers(1, 9, count).astype(float)}


def _bw_spec(nbytes, seconds, ranks, **launch):
    algbw = nbytes / seconds / 1e9
    return {"algbw": algbw, "busbw": algbw * 2 * (ranks - 1) / ranks}


def _bw_tolerance(inputs, expected):
    return {k: 1e-9 * np.abs(v) + 1e-12 for k, v in expected.items()}


bus_bandwidth = formula_problem(
    "bus_bandwidth", title="An all-reduce's algorithm and bus bandwidth (nccl-tests)",
    function="allreduce_bandwidth", args=(("nbytes", int), ("seconds", float), ("ranks", int)),
    results=("algbw", "busbw"), spec=_bw_spec, make_inputs=_bw_inputs, tolerance=_bw_tolerance,
    sizes=Sizes(visible=(6,), hidden=(40,)),
    value_hint=("algbw is the buffer's bytes over the time, in GB/s (10^9 bytes per second); "
                "busbw is algbw · 2(n − 1)/n for an all-reduce: each rank sends and receives "
                "(n − 1)/n of the buffer in the reduce-scatter and again in the all-gather. "
                "With one rank nothing moves: busbw is 0."))
