"""CPU mode's warp intrinsics (autograder/warp.py) against a model and against an H200.

(a) the pure-Python model (tests/warp_model.py) reproduces every result the H200 recorded that
    CUDA defines (tests/fixtures/warp-h200.json, made by scripts/record-warp.py), and its
    activemask() under divergence;
(b) CPU mode replays the same cases and gives the same results, and poison where CUDA leaves the
    result undefined (what the H200 gave there is printed, as information);
(c) seeded random cases at warp sizes 32 and 64, CPU mode against the model;
(d) misuse is reported in plain words, never a hang;
(e) the race detector accepts a warp-synchronous stage with cuda.syncwarp() and flags it without;
(f) a portable shuffle reduction and scan are right at 32 and 64; one that hard-codes 32 is not;
(g) activemask() gives part of the lanes that arrive together (AAG_ACTIVEMASK=converged: all of
    them, as the H200 did; (a)-(b) run in that mode), and a shuffle that reads outside a mask it
    returned stops, naming the lane and the mask.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import re

import numpy as np
import pytest
from numba import cuda, uint64

import autograder as ag
import warp_model as model
from autograder import cpu_mode, races, warp

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "warp-h200.json"
CPU = ag.backend.name == "cpu"
cpu_only = pytest.mark.skipif(not CPU, reason="CPU mode's warp intrinsics")


@pytest.fixture
def converged(monkeypatch):
    """activemask() as the H200 gave it: every lane that reaches the call together (CPU mode's
    default splits them, see (g))."""
    monkeypatch.setenv(warp.ACTIVEMASK_ENV, "converged")


def _load_recorder():
    path = ROOT / "scripts" / "record-warp.py"
    spec = importlib.util.spec_from_file_location("record_warp", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["record_warp"] = module
    spec.loader.exec_module(module)
    return module


rw = _load_recorder()


def _fixture() -> dict:
    if not FIXTURE.exists():
        pytest.skip(f"{FIXTURE.relative_to(ROOT)} is not recorded yet: run "
                    "`python3 scripts/record-warp.py` on an NVIDIA GPU (see its docstring)")
    return json.loads(FIXTURE.read_text())


# -- what the model expects of a recorded kernel ---------------------------------------------------

def _inputs(case):
    _, ins, _, _ = rw.KERNELS[case["kernel"]]
    return {name: (case["inputs"][name] if isinstance(case["inputs"][name], np.ndarray)
                   else rw.decode(case["inputs"][name], rw._dtype(case, spec)))
            for name, spec in ins.items()}


def expected(case) -> dict[str, list]:
    """Per output and element: the encoded value the model expects, or None (undefined, or no
    result)."""
    W = case["warp_size"]
    per_block, total = rw._threads(case)
    kernel = case["kernel"]
    _, _, outs, _ = rw.KERNELS[kernel]
    x = _inputs(case)
    exp = {name: [None] * (total * rw.PER_THREAD.get(name, 1)) for name in outs}

    def put(name, g, value):
        dtype = rw._dtype(case, outs[name])
        if np.dtype(dtype).kind == "u":
            value = int(value) & ((1 << 64) - 1)
        exp[name][g] = rw.encode(np.array([value], dtype=dtype))[0]

    def loop_work(g, arms):
        acc = 0
        for arm in arms:
            for k in range(int(x["spin"][g])):
                acc = {"add": lambda a: a + k + 1, "x3": lambda a: a * 3 + k,
                       "x5": lambda a: a * 5 + k}[arm](acc)
        return acc

    for start in range(0, total, per_block):
        for w0 in range(0, per_block, W):
            first, n = start + w0, min(W, per_block - w0)
            lanes = range(n)
            g = [first + lane for lane in lanes]
            if kernel in ("shfl", "vote", "match", "lanes"):
                for lane in lanes:
                    if kernel == "shfl":
                        put("lane", g[lane], lane)
                    if kernel == "lanes":
                        put("lane", g[lane], lane)
                        put("lt", g[lane], model.lanemask_lt(lane))
                        put("ws", g[lane], W)
                groups: dict[int, list[int]] = {}
                for lane in lanes:
                    if x["role"][g[lane]]:
                        groups.setdefault(int(x["mask"][g[lane]]), []).append(lane)
                if case.get("hazard") == "self":
                    continue
                for members in groups.values():
                    if kernel == "shfl":
                        mode = model.SHFL_MODES[case["mode"]]
                        got = model.shfl(mode, W, {p: (x["val"][g[p]], int(x["arg"][g[p]]))
                                                   for p in members})
                        for p, value in got.items():
                            if value is not model.UNDEFINED:
                                put("out", g[p], value)
                    elif kernel == "vote":
                        preds = {p: int(x["pred"][g[p]]) != 0 for p in members}
                        for p in members:
                            put("ballot", g[p], model.ballot(W, preds))
                            put("all", g[p], model.all_(preds))
                            put("any", g[p], model.any_(preds))
                            put("eq", g[p], model.eq(preds))
                    elif kernel == "match":
                        keys = {p: rw.encode(np.array([x["val"][g[p]]]))[0] for p in members}
                        anys = model.match_any(W, keys)
                        mask, same = model.match_all(W, keys)
                        for p in members:
                            put("any", g[p], anys[p])
                            put("all_mask", g[p], mask)
                            put("all_pred", g[p], same)
                    else:
                        for p in members:
                            put("got", g[p], x["val"][start + int(x["arg"][g[p]])])
            elif kernel == "full":
                alive = [p for p in lanes if x["role"][g[p]]]
                down = model.shfl("down", W, {p: (x["val"][g[p]], int(x["down_by"][g[p]]))
                                              for p in alive})
                idx = model.shfl("idx", W, {p: (x["val"][g[p]], int(x["src"][g[p]]))
                                            for p in alive})
                for p in alive:
                    if down[p] is not model.UNDEFINED:
                        put("down", g[p], down[p])
                    if idx[p] is not model.UNDEFINED:
                        put("idx", g[p], idx[p])
                    put("ballot", g[p], model.ballot(W, dict.fromkeys(alive, True)))
                    put("active", g[p], model.activemask(alive))
            elif kernel == "branch":
                arm_a = [p for p in lanes if x["sel"][g[p]]]
                arm_b = [p for p in lanes if not x["sel"][g[p]]]
                for p in lanes:
                    put("arm_a" if p in arm_a else "arm_b", g[p],
                        model.activemask(arm_a if p in arm_a else arm_b))
                    put("after", g[p], model.activemask(lanes))
                    put("work", g[p], loop_work(g[p], ["add"] if p in arm_a else ["x3"]))
            elif kernel in ("ballot_branch", "exit"):
                on = [p for p in lanes if x["sel" if kernel == "ballot_branch" else "alive"][g[p]]]
                preds = {p: int(x["pred"][g[p]]) != 0 for p in on}
                for p in on:
                    put("active", g[p], model.activemask(on))
                    put("ballot", g[p], model.ballot(W, preds))
                if kernel == "ballot_branch":
                    for p in lanes:
                        put("work", g[p], loop_work(g[p], ["add"] if p in on else []))
            elif kernel == "loop":
                for p in lanes:
                    for i in range(int(x["trips"][g[p]])):
                        still = [q for q in lanes if x["trips"][g[q]] > i]
                        put("inside", g[p] * rw.LOOP_TRIPS + i, model.activemask(still))
                    put("after", g[p], model.activemask(lanes))
            elif kernel == "nested":
                outer = [p for p in lanes if x["a"][g[p]]]
                inner = [p for p in outer if x["c"][g[p]]]
                for p in lanes:
                    if p in inner:
                        put("inner", g[p], model.activemask(inner))
                    if p in outer:
                        put("outer", g[p], model.activemask(outer))
                    put("after", g[p], model.activemask(lanes))
                    arms = (["add"] if p in outer else []) + (["x5"] if p in inner else [])
                    put("work", g[p], loop_work(g[p], arms))
    return exp


POISONED = ("out", "down", "idx")        # the outputs that carry a shuffled value


# Observed ("O") results CPU mode does not imitate, and why. activemask() inside a loop whose trip
# count differs per lane: on the H200 the compiled loop (unrolled, with a remainder loop) split the
# lanes into smaller groups than "the lanes in the same iteration", which is CPU mode's rule (it
# gives a superset). CUDA promises neither; code that is correct with any active set is correct
# with both. Reported by test_h200_activemask_under_divergence_matches_the_model, not asserted.
NOT_IMITATED = {("loop", "inside")}


def _imitated(case, name) -> bool:
    return (case["kernel"], name) not in NOT_IMITATED


def compare(case, got: dict[str, list], letters=("D",)) -> list[str]:
    """Where ``got`` differs from the model on the elements of class ``letters``; also checks that
    the model and the recorder agree on which results are defined."""
    exp = expected(case)
    classes = case.get("classes") or rw.classify(case)
    bad = []
    for name, row in exp.items():
        for i, (want, cls) in enumerate(zip(row, classes[name])):
            if (want is None) != (cls in "U-"):
                bad.append(f"{case['id']} {name}[{i}]: recorder says {cls!r}, model "
                           f"{'has no value' if want is None else 'has one'}")
            elif cls == "O" and not _imitated(case, name):
                continue
            elif cls in letters and got[name][i] != want:
                bad.append(f"{case['id']} {name}[{i}] ({cls}): got {got[name][i]}, model {want}")
    return bad


def _poison_bits(case, name) -> set[int]:
    dtype = np.dtype(rw._dtype(case, rw.KERNELS[case["kernel"]][2][name]))
    return {rw.encode(np.array([warp._poison(dtype.type(0))]))[0]}


def check_undefined_poison(case, got) -> list[str]:
    classes = case.get("classes") or rw.classify(case)
    bad = []
    for name in POISONED:
        if name not in got:
            continue
        poison = _poison_bits(case, name)
        for i, cls in enumerate(classes[name]):
            if cls == "U" and got[name][i] not in poison:
                bad.append(f"{case['id']} {name}[{i}]: undefined read gave {got[name][i]}, "
                           "not poison")
    return bad


def _run_sim(case, W) -> dict[str, list] | Exception:
    with cpu_mode.warp_size_as(W):
        try:
            outs = rw.run_case(case)
        except Exception as exc:   # noqa: BLE001  (a hazard CPU mode refuses)
            return exc
    return {k: rw.encode(v) for k, v in outs.items()}


# -- (a) the model against the H200 ----------------------------------------------------------------

def test_h200_defined_results_match_the_model():
    doc = _fixture()
    bad, checked = [], 0
    for case in doc["cases"] + [h for h in doc["hazards"] if "outputs" in h]:
        if "outputs" not in case:
            bad.append(f"{case['id']}: no outputs recorded ({case.get('error')})")
            continue
        bad += compare(case, case["outputs"], letters="D")
        checked += sum(c.count("D") for c in case["classes"].values())
    print(f"{checked} defined results of {doc['meta'].get('device')} checked against the model")
    print(f"what it gave where CUDA leaves the result undefined (not tested; CPU mode gives "
          f"poison there):\n{_describe_undefined(doc)}")
    assert not bad, f"{len(bad)} differences, first: " + "\n".join(bad[:15])


def test_h200_activemask_under_divergence_matches_the_model():
    """Not promised by CUDA: what the H200's convergence gave, which CPU mode imitates."""
    doc = _fixture()
    bad, checked, loose = [], 0, 0
    for case in doc["cases"]:
        if "O" in "".join(case["classes"].values()):
            bad += compare(case, case["outputs"], letters="O")
            checked += sum(c.count("O") for n, c in case["classes"].items() if _imitated(case, n))
            for name in [n for n in case["classes"] if not _imitated(case, n)]:
                want = expected(case)[name]
                loose += sum(cls == "O" and case["outputs"][name][i] != want[i]
                             for i, cls in enumerate(case["classes"][name]))
    print(f"{checked} activemask results under divergence checked; not imitated (see "
          f"NOT_IMITATED): {loose} of the H200's results inside per-lane-length loops differ "
          "from CPU mode's 'same iteration' rule")
    assert checked
    assert not bad, (f"{len(bad)} activemask results differ from the model (CPU mode's rule, "
                     "see autograder/warp.py), first: " + "\n".join(bad[:15]))


def test_h200_recording_is_complete():
    doc = _fixture()
    kernels = Counter(c["kernel"] for c in doc["cases"])
    assert set(kernels) == set(rw.KERNELS) - {"full"}
    assert {(c["mode"], c["dtype"]) for c in doc["cases"] if c["kernel"] == "shfl"} == \
        {(m, d) for m in range(4) for d in rw.DTYPES}
    assert FIXTURE.stat().st_size < 1.5e6
    assert doc["meta"]["seed"] == rw.SEED and not doc["meta"]["simulator"]
    # The recorded cases are the ones the script makes today (the tests replay make_cases()).
    fresh = [rw._jsonable(c)["inputs"] for c in rw.make_cases(doc["meta"]["seed"])]
    assert [c["inputs"] for c in doc["cases"]] == fresh


# -- (b) CPU mode replays the H200's cases ---------------------------------------------------------

def _describe_undefined(doc) -> str:
    """What the H200 gave where CUDA leaves the result undefined, in a few words."""
    kinds: Counter = Counter()
    for case in doc["cases"] + doc["hazards"]:
        if "outputs" not in case:
            kinds[f"{case.get('hazard', case['kernel'])}: {case.get('error')}"] += 1
            continue
        x = _inputs(case)
        per_block, total = rw._threads(case)
        W = case["warp_size"]
        for name in POISONED:
            for g, cls in enumerate(case["classes"].get(name, "")):
                if cls != "U":
                    continue
                value = case["outputs"][name][g]
                own = rw.encode(np.asarray(x["val"][g:g + 1]))[0]
                t = g % per_block
                first = g - t % W
                if case["kernel"] == "shfl":
                    src = rw.source_lane(case["mode"], t % W, int(x["arg"][g]), W)
                else:
                    src = rw.source_lane(2 if name == "down" else 0, t % W,
                                         int(x["down_by" if name == "down" else "src"][g]), W)
                n = min(W, per_block - (t - t % W))
                theirs = (rw.encode(np.asarray(x["val"][first + src:first + src + 1]))[0]
                          if src < n else None)
                what = ("CPU mode's poison" if value in _poison_bits(case, name) else
                        "the source lane's value" if value == theirs else
                        "the caller's own value" if value == own else
                        "zero" if value == 0 else "something else")
                where = ("a source lane, by a lane whose mask leaves itself out"
                         if case.get("hazard") == "self" else
                         "a lane past the end of the warp" if src >= n else
                         "an exited lane" if case.get("hazard") == "exited" else
                         "a lane outside the mask")
                kinds[f"{case.get('hazard', case['kernel'])}: read of {where} gave {what}"] += 1
    return "\n".join(f"  {v:5d} x {k}" for k, v in kinds.most_common())


@cpu_only
@pytest.mark.usefixtures("converged")
def test_cpu_mode_replays_the_h200_cases():
    doc = _fixture()
    bad = []
    replay = [h for h in doc["hazards"] if "outputs" in h and h["hazard"] != "self"]
    for case in doc["cases"] + replay:
        got = _run_sim(case, case["warp_size"])
        if isinstance(got, Exception):
            bad.append(f"{case['id']}: CPU mode raised {got}")
            continue
        bad += compare(case, got, letters="DO") + check_undefined_poison(case, got)
        if "outputs" in case:                      # same cases: the H200's D and O results
            for name, cls in case["classes"].items():
                for i, c in enumerate(cls):
                    if c == "O" and not _imitated(case, name):
                        continue
                    if c in "DO" and got[name][i] != case["outputs"][name][i]:
                        bad.append(f"{case['id']} {name}[{i}]: CPU mode {got[name][i]}, H200 "
                                   f"{case['outputs'][name][i]}")
    for hazard in doc["hazards"]:
        if hazard.get("hazard") == "self":
            got = _run_sim(hazard, hazard["warp_size"])
            assert isinstance(got, warp.WarpMaskError), got
    assert not bad, f"{len(bad)} differences, first: " + "\n".join(bad[:15])


# -- (c) randomized, at warp sizes 32 and 64 -------------------------------------------------------

@cpu_only
@pytest.mark.usefixtures("converged")
@pytest.mark.parametrize("W", [32, 64])
def test_random_cases_match_the_model(W):
    cases = rw.make_cases(seed=1000 + W, warp_size=W, scale=0.5)
    hazards = rw.make_hazards(seed=2000 + W, warp_size=W)
    bad, checked = [], 0
    for case in cases + hazards:
        got = _run_sim(case, W)
        if case.get("hazard") == "self":
            assert isinstance(got, warp.WarpMaskError), got
            continue
        if isinstance(got, Exception):
            bad.append(f"{case['id']}: CPU mode raised {got}")
            continue
        bad += compare(case, got, letters="DO") + check_undefined_poison(case, got)
        checked += sum(len(v) for v in got.values())
        if case["kernel"] == "shfl":
            assert got["lane"] == [g % int(np.prod(case["block"])) % W
                                   for g in range(len(got["lane"]))]
    assert checked > 3000
    assert not bad, f"{len(bad)} differences at warp size {W}, first: " + "\n".join(bad[:15])


@cpu_only
def test_model_is_ptx_at_32():
    # The PTX pseudo-code's b[4:0]: a source lane, delta or xor mask of 32 or more wraps.
    assert model.shfl_source("idx", 3, 33, 32) == (1, True)
    assert model.shfl_source("down", 3, 33, 32) == (4, True)
    assert model.shfl_source("down", 30, 5, 32) == (30, False)
    assert model.shfl_source("up", 2, 3, 32) == (2, False)
    assert model.shfl_source("bfly", 5, 35, 32) == (6, True)
    # A width of 8 in CUDA C (segment mask 0x18 << 8): lanes read within their own segment.
    assert model.shfl_source("down", 6, 3, 32, c=(0x18 << 8) | 0x1F) == (6, False)
    assert model.shfl_source("idx", 13, 2, 32, c=(0x18 << 8) | 0x1F) == (10, True)


# -- (d) misuse: plain words, never a hang ---------------------------------------------------------

FULL32 = 0xFFFFFFFF


@cuda.jit
def k_self(x, out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_sync(0xFFFFFEFF, x[i], 0)      # leaves out lane 8


@cuda.jit
def k_sync_vs_shfl(x, out):
    i = cuda.threadIdx.x
    if cuda.laneid < 16:
        out[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], 0)
    else:
        cuda.syncthreads()
        out[i] = x[i]


@cuda.jit
def k_different_ops(x, out):
    i = cuda.threadIdx.x
    if i % 2 == 0:
        out[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], 0)
    else:
        out[i] = cuda.ballot_sync(0xFFFFFFFF, 1)


@cuda.jit
def k_different_masks(x, out):
    i = cuda.threadIdx.x
    mask = 0xFF if i == 3 else 0xFFFF
    if i < 16:
        out[i] = cuda.shfl_sync(mask, x[i], 0)


@cuda.jit
def k_ring(x, out):
    i = cuda.threadIdx.x
    if i < 3:
        out[i] = cuda.shfl_sync((1 << i) | (1 << ((i + 1) % 3)), x[i], 0)


@cuda.jit
def k_exited(x, out):
    i = cuda.threadIdx.x
    if i >= 16:
        return
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 8)


@cuda.jit
def k_late(x, out):
    i = cuda.threadIdx.x
    if i == 0:
        _GATE.wait()                                    # a lane that does not come in time
    out[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], 0)


_GATE = threading.Event()


@cuda.jit
def k_race_and_wait(x, out):
    s = cuda.shared.array(1, np.float32)
    i = cuda.threadIdx.x
    if i < 2:
        s[0] = x[i]                                     # two lanes write one element: a race
    out[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], 0)


def _launch(kernel, n=32, dtype=np.float32):
    x = np.arange(n, dtype=dtype)
    out = np.zeros(n, dtype)
    start = time.monotonic()
    kernel[1, n](x, out)
    return out, time.monotonic() - start


@cpu_only
@pytest.mark.timeout(60)
def test_mask_without_own_lane():
    with pytest.raises(warp.WarpMaskError) as err:
        _launch(k_self)
    text = str(err.value)
    assert "lane 8 of warp 0" in text and "leaves out its own lane" in text
    assert "0xfffffeff" in text and "cuda.shfl_sync(0xFFFFFEFF" in text


@cpu_only
@pytest.mark.timeout(60)
def test_syncthreads_against_a_shuffle_is_a_deadlock_not_a_hang():
    with pytest.raises(warp.WarpDeadlock) as err:
        _launch(k_sync_vs_shfl)
    text = str(err.value)
    assert "lanes 0-15 of warp 0 wait at cuda.shfl_sync" in text
    assert "lanes 16-31 of warp 0, which wait at cuda.syncthreads()" in text
    assert "hangs" in text and "cuda.syncthreads()\n" not in text


@cpu_only
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kernel, words", [
    (k_different_ops, ["different intrinsics", "cuda.shfl_sync", "cuda.ballot_sync"]),
    (k_different_masks, ["different masks", "0x000000ff", "0x0000ffff"]),
])
def test_mismatched_calls(kernel, words):
    with pytest.raises(warp.WarpMismatch) as err:
        _launch(kernel)
    for word in words:
        assert word in str(err.value)


@cpu_only
@pytest.mark.timeout(60)
def test_masks_waiting_in_a_ring():
    with pytest.raises(warp.WarpDeadlock, match="wait for each other"):
        _launch(k_ring)


@cpu_only
@pytest.mark.timeout(60)
def test_finished_lanes_are_not_waited_for_and_read_as_poison(monkeypatch):
    out, _ = _launch(k_exited)
    assert list(out[:8]) == list(np.arange(8, 16, dtype=np.float32))
    assert all(warp.is_poison(v) for v in out[8:16])       # lanes 16-23 had returned
    assert any("had finished the kernel" in note for note in warp.undefined_reads())
    monkeypatch.setenv(warp.UNDEFINED_ENV, "error")
    with pytest.raises(warp.WarpUndefinedRead, match="lane 1[6-9]|lane 2[0-3]"):
        _launch(k_exited)


@cpu_only
@pytest.mark.timeout(60)
def test_a_lane_that_never_comes_times_out(monkeypatch):
    monkeypatch.setenv(warp.TIMEOUT_ENV, "1")
    _GATE.clear()
    try:
        with pytest.raises(warp.WarpDeadlock, match="warp timeout.*for thread 0 \\(lane 0"):
            _launch(k_late)
    finally:
        _GATE.set()                          # let the held lane finish (it then stops quietly)


@cpu_only
@pytest.mark.timeout(60)
def test_the_first_failure_is_reported_not_the_lanes_it_stopped():
    with pytest.raises(races.SharedMemoryRace):
        _launch(k_race_and_wait)


@cpu_only
def test_values_numba_would_refuse():
    @cuda.jit
    def k(out):
        out[0] = cuda.shfl_sync(0xFFFFFFFF, True, 0)
    with pytest.raises(TypeError, match="32- and 64-bit ints and floats"):
        k[1, 32](np.zeros(1))


@cpu_only
@pytest.mark.usefixtures("converged")
def test_lane_ids_and_warp_size_follow_the_parameter():
    @cuda.jit
    def k(lane, size, lt, ballot, count):
        t = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
        lane[t] = cuda.laneid
        size[t] = cuda.warpsize
        lt[t] = cuda.lanemask_lt()
        b = cuda.ballot_sync(cuda.activemask(), 1)
        ballot[t] = b
        count[t] = cuda.popc(b)
    for W in (32, 64):
        with cpu_mode.warp_size_as(W):
            n = 40 * 3
            arrays = [np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint64),
                      np.zeros(n, np.int64), np.zeros(n, np.int64)]
            k[1, (40, 3)](*arrays)
        lane, size, lt, ballot, count = arrays
        t = np.arange(n)
        assert (lane == t % W).all() and (size == W).all()
        assert [int(v) for v in lt] == [(1 << int(x)) - 1 for x in t % W]
        last = n % W or W                           # lanes in the partial last warp
        assert (count == np.where(t // W == n // W, last, W)).all()
        assert ballot[0] == -1                      # a full warp: every bit, signed
    assert cpu_mode.warp_size() == 32


# -- (e) the race detector and syncwarp ------------------------------------------------------------

@cuda.jit
def k_warp_stage(x, out, sync):
    s = cuda.shared.array(64, np.float32)
    i = cuda.threadIdx.x
    s[i] = x[i]
    if sync:
        cuda.syncwarp()
    v = s[(i + 1) % cuda.warpsize + i - i % cuda.warpsize]
    if sync:
        cuda.syncwarp()
    s[i] = v * 2
    if sync:
        cuda.syncwarp()
    out[i] = s[i ^ 1]


@cuda.jit
def k_last_warp_sum(x, out, correct):
    s = cuda.shared.array(64, np.float32)
    i = cuda.threadIdx.x
    s[i] = x[i]
    cuda.syncthreads()
    if i < 32:
        offset = 32
        while offset > 0:
            if correct:                       # read, syncwarp, write, syncwarp: right on Volta+
                v = s[i] + s[i + offset] if i + offset < 64 else s[i]
                cuda.syncwarp(0xFFFFFFFF)
                s[i] = v
                cuda.syncwarp(0xFFFFFFFF)
            else:                             # the pre-Volta idiom: lanes read what others write
                if i + offset < 64:
                    s[i] += s[i + offset]
                cuda.syncwarp(0xFFFFFFFF)
            offset //= 2
    if i == 0:
        out[0] = s[0]


@cuda.jit
def k_across_warps(x, out, via_shuffle):
    s = cuda.shared.array(64, np.float32)
    i = cuda.threadIdx.x
    s[i] = x[i]
    if via_shuffle:
        cuda.shfl_sync(0xFFFFFFFF, 0, 0)
    else:
        cuda.syncwarp()
    out[i] = s[(i + 32) % 64] if not via_shuffle else s[i ^ 1]


@cuda.jit
def k_half_syncwarp(x, out):
    s = cuda.shared.array(32, np.float32)
    i = cuda.threadIdx.x
    if i < 16:
        s[i] = x[i]
        cuda.syncwarp(0xFFFF)
    else:
        out[i] = s[i - 16]                    # lane 16+ took no part in that syncwarp


@cpu_only
def test_syncwarp_orders_a_warp_synchronous_stage():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    k_warp_stage[1, 32](x, out, True)
    expect = 2 * x[((np.arange(32) ^ 1) + 1) % 32]
    assert (out == expect).all()
    with pytest.raises(races.SharedMemoryRace) as err:
        k_warp_stage[1, 32](x, out, False)
    assert "one warp" in str(err.value) and "no cuda.syncthreads() between them" in str(err.value)


@cpu_only
def test_last_warp_reduction_needs_syncwarp_between_read_and_write():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(1, np.float32)
    k_last_warp_sum[1, 64](x, out, True)
    assert out[0] == x.sum()
    with pytest.raises(races.SharedMemoryRace, match="cuda.syncwarp"):
        k_last_warp_sum[1, 64](x, out, False)


@cpu_only
def test_syncwarp_does_not_order_other_warps_or_lanes_outside_the_mask():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with pytest.raises(races.SharedMemoryRace) as err:
        k_across_warps[1, 64](x, out, False)
    assert "one warp" not in str(err.value)
    k_across_warps[1, 64](x, out, True)              # a shuffle orders its own warp's lanes
    assert (out == x[np.arange(64) ^ 1]).all()
    with pytest.raises(races.SharedMemoryRace):
        k_half_syncwarp[1, 32](x[:32], out[:32])


# -- (f) portable warp code at 32 and 64 -----------------------------------------------------------

@cuda.jit
def k_reduce(x, out, hard_coded):
    i = cuda.grid(1)
    v = x[i] if i < x.size else np.float32(0)
    mask = ~uint64(0) >> (64 - cuda.warpsize)          # every lane of the warp, 32 or 64
    offset = 16 if hard_coded else cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(mask, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def k_scan(x, out, hard_coded):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    width = 32 if hard_coded else cuda.warpsize
    d = 1
    while d < width:
        n = cuda.shfl_up_sync(mask, v, d)
        if lane >= d:
            v += n
        d *= 2
    out[i] = v


@cpu_only
@pytest.mark.parametrize("W", [32, 64])
def test_portable_reduction_and_scan(W):
    rng = np.random.default_rng(W)
    x = rng.integers(-50, 50, size=200).astype(np.float32)
    with cpu_mode.warp_size_as(W):
        total = np.zeros(1, np.float32)
        k_reduce[2, 128](x, total, False)
        assert total[0] == x.sum()
        xs = x[:128].astype(np.int64)
        scan = np.zeros(128, np.int64)
        k_scan[1, 128](xs, scan, False)
        assert (scan == np.concatenate([np.cumsum(xs[k:k + W]) for k in range(0, 128, W)])).all()
        hard_total = np.zeros(1, np.float32)
        k_reduce[2, 128](x, hard_total, True)
        hard_scan = np.zeros(128, np.int64)
        k_scan[1, 128](xs, hard_scan, True)
    if W == 32:
        assert hard_total[0] == x.sum() and (hard_scan == scan).all()
    else:
        assert hard_total[0] != x.sum() and (hard_scan != scan).any()


@cpu_only
@pytest.mark.skipif(not hasattr(__import__("os"), "sched_getaffinity") or
                    len(__import__("os").sched_getaffinity(0)) < 2, reason="needs two cores")
def test_a_simulated_launch_runs_on_one_core_and_gives_the_others_back():
    """Does every thread of a simulated block run on one core (handing Python's lock between
    cores made shuffle checks three times slower), and does the launching thread get all its
    cores back afterwards, also when the kernel fails?"""
    import os
    before = os.sched_getaffinity(0)
    seen: list = []

    @cuda.jit
    def record(out):
        seen.append(frozenset(os.sched_getaffinity(0)))
        out[cuda.grid(1)] = 1

    out = np.zeros(96, np.float32)
    record[3, 32](out)
    assert (out == 1).all() and len(seen) == 96
    assert all(len(cores) == 1 for cores in seen) and len(set(seen)) == 1
    assert os.sched_getaffinity(0) == before

    @cuda.jit
    def fails(out):
        out[cuda.grid(1) + 1000] = 1

    with pytest.raises(Exception):
        fails[1, 32](out)
    assert os.sched_getaffinity(0) == before


@cpu_only
@pytest.mark.parametrize("blocks, threads, what", [(100 // 128, 128, "0 blocks"),
                                                   ((0, 2), (8, 8), "0 blocks"),
                                                   (4, 0, "blocks of 0 threads")])
def test_an_empty_launch_is_refused_as_on_a_gpu(blocks, threads, what):
    """A launch of no block (n // threads with n < threads) ran nothing, silently, and the cell
    printed whatever the output held; a GPU refuses it. CPU mode says what happened and why."""
    @cuda.jit
    def one(out):
        out[0] = 1

    out = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=f"launched {what}.*round up"):
        one[blocks, threads](out)
    one[1, 1](out)                              # a launch of something still runs
    assert out[0] == 1


@cpu_only
def test_speed_of_shuffles_in_cpu_mode():
    """Not a limit, a measurement (printed): a 256-thread block doing 5 shuffle rounds, and a
    1000-element shuffle reduction (4 blocks of 256)."""
    @cuda.jit
    def rounds(x, out):
        i = cuda.grid(1)
        v = x[i]
        for r in range(5):
            v += cuda.shfl_xor_sync(0xFFFFFFFF, v, 1 << r)
        out[i] = v
    x = np.ones(256, np.float32)
    out = np.zeros(256, np.float32)
    start = time.monotonic()
    rounds[1, 256](x, out)
    t_rounds = time.monotonic() - start
    assert (out == 32).all()
    xs = np.arange(1000, dtype=np.float32)
    total = np.zeros(1, np.float32)
    start = time.monotonic()
    k_reduce[4, 256](xs, total, False)
    t_reduce = time.monotonic() - start
    assert total[0] == xs.sum()
    print(f"CPU mode: 256 threads x 5 shuffle rounds {t_rounds:.2f} s; 1000-element shuffle "
          f"reduction (1024 threads) {t_reduce:.2f} s")


@cpu_only
def test_bit_counts_of_warp_masks():
    # A ballot of a full warp is int32 -1 in Numba: popc must count 32 bits, not a Python -1's.
    full32 = warp.Word(-1, 32, True)
    assert (warp.popc(full32), warp.ffs(full32), warp.clz(full32)) == (32, 1, 0)
    assert warp.popc(warp.Word(-1, 64, True)) == 64
    assert warp.popc(np.int32(-2)) == 31 and warp.popc(-1) == 64     # a Python int is int64
    assert warp.ffs(0) == 0 and warp.ffs(0b1000) == 4 and warp.clz(1) == 31
    assert warp.brev(1) == 1 << 31 and warp.brev(np.int64(1)) == 1 << 63
    assert warp.Word(1 << 31, 32, True) == -(1 << 31) and warp.Word(-1, 32, False) == 0xFFFFFFFF
    with pytest.raises(ValueError, match="power of two"):
        with cpu_mode.warp_size_as(48):
            pass


@cpu_only
@pytest.mark.usefixtures("converged")
def test_activemask_in_a_device_function_tells_its_callers_apart():
    @cuda.jit(device=True)
    def who():
        return cuda.activemask()

    @cuda.jit
    def k(out):
        i = cuda.threadIdx.x
        if i < 5:
            out[i] = who()
        else:
            out[i] = who()
    out = np.zeros(32, np.uint64)
    k[1, 32](out)
    assert (out[:5] == 0b11111).all() and (out[5:] == 0xFFFFFFFF & ~0b11111).all()


# -- (g) activemask(): part of the lanes, and no shuffle outside it --------------------------------

@cuda.jit
def k_masks(out):
    out[cuda.threadIdx.x] = cuda.activemask()


@cuda.jit
def k_active_reduce(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else np.float32(0)
    mask = cuda.activemask()
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(mask, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // cuda.warpsize] = v


@cpu_only
@pytest.mark.parametrize("W", [32, 64])
def test_activemask_gives_part_of_the_lanes_that_arrive_together(W, monkeypatch):
    """CUDA promises only that activemask() names its caller among the lanes converged at that
    instant. By default CPU mode gives each lane a part of the lanes that reached the call
    together, never all of them: the masks partition the warp (the lanes a mask names all got
    that mask), each names its caller, and a run gives the same masks again. With
    AAG_ACTIVEMASK=converged every lane gets them all."""
    n = 2 * W + 5                                   # two whole warps and a partial one of 5
    with cpu_mode.warp_size_as(W):
        masks, again, whole = (np.zeros(n, np.uint64) for _ in range(3))
        k_masks[1, n](masks)
        k_masks[1, n](again)
        monkeypatch.setenv(warp.ACTIVEMASK_ENV, "converged")
        k_masks[1, n](whole)
    assert (masks == again).all()
    for w in range(3):
        size = min(W, n - w * W)
        everyone = (1 << size) - 1
        mine = [int(m) for m in masks[w * W:w * W + size]]
        assert [int(m) for m in whole[w * W:w * W + size]] == [everyone] * size
        for lane, m in enumerate(mine):
            assert (m >> lane) & 1 and m & ~everyone == 0 and m != everyone, (w, lane, hex(m))
            assert all(mine[q] == m for q in range(size) if (m >> q) & 1), (w, lane, hex(m))


@cpu_only
@pytest.mark.parametrize("W", [32, 64])
def test_a_shuffle_outside_an_activemask_mask_names_the_lane_and_the_mask(W, monkeypatch):
    """A reduction whose mask is activemask()'s stops at the first shuffle that reads a lane
    outside that mask, whichever warp size, saying which lane, which mask, where it came from and
    what to write instead; in converged mode (the whole warp at the call) it adds up right."""
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(128 // W, np.float32)
    with cpu_mode.warp_size_as(W):
        with pytest.raises(warp.WarpActiveMaskRead) as err:
            k_active_reduce[1, 128](x, out)
        monkeypatch.setenv(warp.ACTIVEMASK_ENV, "converged")
        k_active_reduce[1, 128](x, out)
    text = str(err.value)
    found = re.search(r"read lane (\d+) with cuda\.shfl_down_sync .*? is not in the mask "
                      r"0x([0-9a-f]+), which cuda\.activemask\(\) returned at line \d+ "
                      r"`mask = cuda\.activemask\(\)`", text)
    assert found, text
    lane, mask = int(found.group(1)), int(found.group(2), 16)
    assert len(found.group(2)) == W // 4 and mask and not (mask >> lane) & 1
    assert "~uint64(0) >> (64 - cuda.warpsize)" in text and "take part with 0" in text
    padded = np.zeros(128, np.float32)
    padded[:100] = x
    assert (out == padded.reshape(-1, W).sum(axis=1)).all()


@cpu_only
def test_a_mask_from_activemask_that_arithmetic_changed_reads_poison_not_an_error():
    """Only activemask()'s own value is traced: a mask computed from it is a plain int, and a
    read outside it is the usual undefined read (poison), as for any other mask."""
    @cuda.jit
    def k(x, out):
        i = cuda.threadIdx.x
        m = cuda.activemask() | 0
        out[i] = cuda.shfl_down_sync(m, x[i], 1)
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    k[1, 32](x, out)
    assert any(warp.is_poison(v) for v in out)
    assert any("which is not in the mask" in note for note in warp.undefined_reads())
