"""Chapter 28: does the ring's schedule finish every chunk, do simulated ranks hold their own
buffers and copy between them, does the ordering check catch two ranks' operations on the same
bytes with nothing between them (and accept every way of ordering them), does the check pass the
course's ring at every rank count and fail wrong rings, host sums and kernels launched outside
their rank with a verdict that says which, and do the measuring cells say why they cannot run
without two GPUs?

CPU mode runs every case of the course's ring in about two seconds; the bank
(tests/test_bank.py) grades the learner-style rings through the judge. GPU tests are marked: one
GPU (simulated ranks sharing it, real streams) and two GPUs (a rank per GPU, peer copies)."""

from pathlib import Path

import numpy as np
import pytest

import autograder as ag
from autograder.core.checks import CheckFailed, Outcome
from autograder.problems.ch28 import notebook, ranks as ranks_module, references, specs

ch28 = ag.problems.ch28
CPU = not ag.backend.is_gpu
GPUS = ch28.gpu_count()
BANK = Path(__file__).resolve().parent / "bank" / "ch28_multi_gpu"
needs_gpu = pytest.mark.skipif(CPU, reason="needs a GPU: real streams, ranks simulated on it")
needs_two_gpus = pytest.mark.skipif(GPUS < 2, reason=f"needs 2 GPUs (a rank per GPU, peer "
                                                      f"copies); this machine has {GPUS}")


def _entry(name: str) -> dict:
    """A bank entry's cell, run in a namespace of its own (as the notebook's cells would be)."""
    from numba import cuda
    exercise = "bus_bandwidth" if name.startswith("bw:") else "ring_allreduce"
    path = BANK / exercise / (name.removeprefix("bw:") + ".py")
    ns = {"np": np, "cuda": cuda, "ag": ag}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns


def _verdict(fn, hidden=False, sizes=None):
    problem = ch28.ring_allreduce
    cases = problem.cases(hidden=hidden)
    if sizes:
        cases = [c for c in cases if c.size in sizes]
    return problem.verdict(fn, cases)


# ---- the schedule (no device) -----------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_the_schedule_finishes_one_chunk_per_rank_then_every_chunk_everywhere(n):
    held = ch28.contributions(n)
    assert len(held) == 2 * (n - 1) + 1
    assert (held[0] == 1).all()
    after_reduce_scatter = held[n - 1]
    for r in range(n):
        assert after_reduce_scatter[r, (r + 1) % n] == n           # rank r: chunk r + 1 finished
    assert (held[-1] == n).all()


@pytest.mark.parametrize("n, m", [(3, 301), (8, 9), (7, 130)])
def test_chunks_cover_the_buffer_and_are_never_empty_in_the_cases(n, m):
    bounds = [((k * m) // n, ((k + 1) * m) // n) for k in range(n)]
    assert bounds[0][0] == 0 and bounds[-1][1] == m
    assert all(hi > lo for lo, hi in bounds)
    assert "chunks of" in specs._label((n, m))


def test_the_cases_cover_one_to_eight_ranks_and_awkward_lengths():
    sizes = [c.size for c in ch28.ring_allreduce.cases(hidden=True)] + \
            [c.size for c in ch28.ring_allreduce.cases()]
    assert {n for n, _ in sizes} >= set(range(1, 9))
    assert all(m % n or n == 1 for n, m in sizes)
    assert any(m // n > 1024 for n, m in sizes)       # a chunk larger than any one block
    assert all(m % b for _, m in sizes for b in (32, 64, 128, 256))


def test_the_tolerance_is_the_float32_bound_and_zero_for_one_rank():
    x = specs.rank_inputs(np.random.default_rng(1), (5, 50))["x"]
    expected = specs._spec(x.astype(np.float64))
    tol = specs._tolerance({"x": x}, expected)["out"]
    ordered = x.sum(axis=0, dtype=np.float32)                  # one float32 order of the sum
    backwards = x[::-1].sum(axis=0, dtype=np.float32)
    for got in (ordered, backwards):
        assert np.all(np.abs(got - expected["out"][0]) <= tol[0])
    assert specs._tolerance({"x": x[:1]}, specs._spec(x[:1].astype(np.float64)))["out"].max() == 0


# ---- the ordering check -----------------------------------------------------------------------

def test_the_order_check_finds_unordered_conflicts_only():
    order = ranks_module.Order(2)
    order.names = [(0, 100, "rank 1's recv")]
    order.queue(0, [(0, 40, True)], "rank 0's send to rank 1")
    order.queue(1, [(40, 80, True)], "rank 1's kernel", "reads and writes")   # other bytes
    order.queue(0, [(0, 40, False)], "rank 0's later read")                   # same stream
    with pytest.raises(ranks_module.RankRace, match="rank 1's recv.*nothing orders"):
        order.queue(1, [(10, 20, False)], "rank 1's kernel")
    order = ranks_module.Order(2)
    order.queue(0, [(0, 40, True)], "send")
    order.wait(1, 0)                                                          # an event
    order.queue(1, [(0, 40, True)], "kernel")
    order = ranks_module.Order(2)
    order.queue(0, [(0, 40, True)], "send")
    order.sync(0)                                                             # the host waited
    order.queue(1, [(0, 40, True)], "kernel")
    assert order.log == [(0, 40, True, 1, 1, "kernel", "")]                   # the send is done
    order = ranks_module.Order(3)
    order.queue(0, [(0, 8, False)], "a read")
    order.queue(1, [(0, 8, False)], "another read")                           # reads never race


def test_a_wait_chain_around_the_ring_orders_transitively():
    order = ranks_module.Order(3)
    order.queue(2, [(0, 8, True)], "rank 2 writes")
    order.wait(0, 2)
    order.wait(1, 0)
    order.queue(1, [(0, 8, True)], "rank 1 writes after rank 0 waited for rank 2")


# ---- simulated ranks ----------------------------------------------------------------------------

@pytest.mark.skipif(not CPU, reason="a CPU-mode test: simulated ranks on one device")
def test_simulated_ranks_hold_their_own_buffers_and_copy_between_them():
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    group = ch28.Ranks(list(x))
    assert group.simulated and group.gpu_ids == [0, 0] and group.chunk_max == 3
    a, b = group
    assert np.isnan(b.recv.copy_to_host()).all() and np.array_equal(b.buf.copy_to_host(), x[1])
    a.send(a.buf[3:6], to=b)
    b.wait_for(a)
    a.send(a.buf[:2], to=b, into=b.buf[4:6])
    group.synchronize()
    assert np.array_equal(b.recv.copy_to_host(), x[0, 3:6])
    assert np.array_equal(b.buf.copy_to_host(), [6, 7, 8, 9, 0, 1])
    assert np.array_equal(a.buf.copy_to_host(), x[0])                       # the sender's own
    with pytest.raises(ch28.RankUsageError, match="its own arrays"):
        a.send(b.buf[:2], to=b)
    with pytest.raises(ch28.RankUsageError, match="not its number"):
        a.send(a.buf[:2], to=1)
    with pytest.raises(ch28.RankUsageError, match="elements into"):
        a.send(a.buf[:2], to=b, into=b.buf[:3])
    with pytest.raises(ch28.RankUsageError, match="not its own"):
        a.launch(references.add_into_kernel(), 1, 32, a.buf[:3], b.recv)
    assert "simulated" in repr(a)


def test_run_ring_gives_exact_sums_for_the_course_ring():
    before, after = ch28.run_ring(ch28.reference_ring_allreduce, ranks=4, m=11)
    assert np.array_equal(after, np.broadcast_to(before.sum(axis=0), after.shape))


# ---- the check ----------------------------------------------------------------------------------

def test_the_check_passes_the_course_ring_on_every_case():
    for hidden in (False, True):
        verdict = _verdict(ch28.reference_ring_allreduce, hidden=hidden)
        assert verdict.passed, verdict


def test_the_check_passes_the_notebooks_solution_and_other_right_rings():
    for name in ("ok_notebook_ring", "ok_one_rank_at_a_time", "ok_host_waits_every_step"):
        verdict = _verdict(_entry(name)["ring_allreduce"], hidden=True,
                           sizes={(2, 257), (5, 333), (8, 9)})
        assert verdict.passed, (name, verdict)


@pytest.mark.parametrize("name, says", [
    ("wrong_adds_into_its_own_chunk", "wrong chunks per rank"),
    ("wrong_reduce_scatter_one_step_short", "wrong chunks per rank"),
    ("wrong_no_all_gather", "wrong chunks per rank"),
    ("wrong_race_add_before_the_chunk_arrives", "RankRace"),
    ("wrong_race_send_while_the_receiver_adds", "RankRace"),
    ("exploit_host_numpy_sum", "copied to the host"),
    ("exploit_host_sum_through_scratch", "host"),
    ("exploit_kernel_outside_its_rank", "r.launch"),
])
def test_the_check_fails_wrong_rings_and_host_sums_saying_why(name, says):
    verdict = _verdict(_entry(name)["ring_allreduce"])
    assert not verdict.passed and says in verdict.message, verdict


def test_a_race_is_reported_with_both_operations_and_the_buffer():
    verdict = _verdict(_entry("wrong_race_send_while_the_receiver_adds")["ring_allreduce"])
    assert "recv" in verdict.message and "send to rank" in verdict.message, verdict


def test_ranks_that_disagree_in_their_bits_fail():
    problem = ch28.ring_allreduce
    case = problem.cases()[0]
    expected, tol = problem.reference_values(case)
    got = expected["out"].astype(np.float32)
    assert problem.judge(case, Outcome(outputs={"out": got.copy()})).passed
    nudged = got.copy()
    i = int(np.argmax(tol["out"][1]))
    nudged[1, i] = np.nextafter(nudged[1, i], np.float32(np.inf))     # within the bound
    verdict = problem.judge(case, Outcome(outputs={"out": nudged}))
    assert not verdict.passed and "different bits" in verdict.message


def test_a_value_written_behind_the_recorders_back_fails_where_it_came_from():
    """CPU mode: while the check holds the ranks, the host (here through the simulator's
    internals, no hooked access) reads only a NaN decoy, so its "sum" is none; and what it writes
    into a rank's memory is found at the next operation of the ranks."""
    if not CPU:
        pytest.skip("a CPU-mode test: the simulator's internals")

    add_into = _entry("ok_notebook_ring")["add_into"]

    def behind(ranks):
        total = sum(r.buf.__dict__["_ary"].astype(np.float64) for r in ranks).astype(np.float32)
        for r in ranks:
            r.buf.__dict__["_ary"][:] = total
            r.launch(add_into, 1, 32, r.recv[:1], r.recv[:1])      # a launch, storing nothing

    verdict = _verdict(behind)
    assert not verdict.passed and "elements are wrong" in verdict.message, verdict

    def zeros_behind(ranks):
        for r in ranks:
            r.buf.__dict__["_ary"][:] = 0
            r.launch(add_into, 1, 32, r.recv[:1], r.recv[:1])

    verdict = _verdict(zeros_behind)
    assert not verdict.passed and "was changed between the ranks' operations" in verdict.message


def test_a_checked_call_leaves_no_way_around_the_ranks():
    """CPU mode: inside a check a kernel of one rank that reads another's memory (a closure) is
    refused, ranks.gather() refuses, a write behind the ranks' back is found at the next
    operation; outside a check the same kernel runs as written."""
    if not CPU:
        pytest.skip("a CPU-mode test: the decoy")
    from numba import cuda as numba_cuda
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    group, audit = ranks_module.open_ranks(list(x))
    a, b = group

    @numba_cuda.jit
    def add_other(dst):
        for i in range(dst.size):          # one thread
            dst[i] += other[i]

    other = b.buf
    audit.begin()
    with pytest.raises(ch28.RankUsageError, match="reads `other`"):
        a.launch(add_other, 1, 1, a.buf)
    with pytest.raises(ch28.RankUsageError, match="gather"):
        group.gather()
    b.buf.__dict__["_ary"][0] = 5                  # behind the ranks' back
    with pytest.raises(ch28.RankUsageError, match="rank 1's buf.0. was changed"):
        a.synchronize()
    assert "gathered" in audit.finish()
    assert np.array_equal(np.stack(audit.gather()), x)     # the real contents, back
    a.launch(add_other, 1, 1, a.buf)                       # outside a check: as written
    assert np.array_equal(group.gather()[0], x[0] + x[1])


def test_the_visible_check_raises_in_a_notebook():
    with pytest.raises(CheckFailed, match="wrong chunks per rank"):
        ch28.ring_allreduce.check(_entry("wrong_no_all_gather")["ring_allreduce"])


# ---- 28.2 ---------------------------------------------------------------------------------------

def test_bus_bandwidth_is_nccl_tests_definition():
    assert ch28.bus_bandwidth.verdict(_entry("bw:ok_by_the_definitions")["allreduce_bandwidth"],
                                      ch28.bus_bandwidth.cases(hidden=True)).passed
    for wrong in ("bw:wrong_no_factor", "bw:wrong_factor_without_two", "bw:wrong_gibibytes"):
        fn = _entry(wrong)["allreduce_bandwidth"]
        assert not ch28.bus_bandwidth.verdict(fn, ch28.bus_bandwidth.cases()).passed, wrong
    algbw, busbw = notebook.bus_bandwidth(1 << 30, 0.01, 8)
    assert algbw == pytest.approx(107.374, rel=1e-5) and busbw == pytest.approx(187.905, rel=1e-5)
    assert notebook.bus_bandwidth(4096, 1e-5, 1)[1] == 0


# ---- the measuring cells ------------------------------------------------------------------------

@pytest.mark.skipif(GPUS >= 2, reason="fewer than 2 GPUs only")
def test_the_two_gpu_cells_say_why_they_cannot_run():
    for call in (lambda: ch28.peer_bandwidth(), lambda: ch28.measure_allreduce(
            ch28.reference_ring_allreduce)):
        with pytest.raises(ch28.NeedsGPUs, match="needs 2 GPUs.*no link"):
            call()
    assert "NVLink" in ch28.link_figures() and "data sheet" in ch28.link_figures()
    assert ch28.MESSAGE_SIZES[0] == 4096 and ch28.MESSAGE_SIZES[-1] == 1 << 30


def test_nccl_is_loaded_with_nvls_off(monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    try:
        notebook._nccl()
    except ch28.NeedsGPUs as why:
        assert "cupy" in str(why).lower()
    import os
    assert os.environ["NCCL_NVLS_ENABLE"] == "0"


@pytest.mark.skipif(not CPU, reason="a CPU-mode test: the overlap cell's timing needs a GPU")
def test_the_overlap_step_is_right_both_ways_and_its_timing_needs_a_gpu():
    for overlap in (False, True):
        row = ch28.overlap_step(ch28.reference_ring_allreduce, ranks=2, layers=2, n=40, work=3,
                                overlap=overlap)
        assert row["right"] and row["simulated"], row
    with pytest.raises(ag.timing.NeedsGPU):
        ch28.measure_overlap(ch28.reference_ring_allreduce)


# ---- one GPU: simulated ranks on it, real streams -------------------------------------------------

@needs_gpu
def test_on_a_gpu_the_course_ring_passes_the_gpu_cases_and_races_still_fail():
    assert _verdict(ch28.reference_ring_allreduce, hidden=True).passed
    verdict = _verdict(_entry("wrong_race_add_before_the_chunk_arrives")["ring_allreduce"])
    assert not verdict.passed and "RankRace" in verdict.message
    verdict = _verdict(_entry("exploit_host_numpy_sum")["ring_allreduce"])
    assert not verdict.passed and "copied to the host" in verdict.message


@needs_gpu
def test_on_a_gpu_the_overlap_step_is_right_and_timed():
    rows = ch28.measure_overlap(ch28.reference_ring_allreduce, layers=2, n=1 << 18, work=20)
    assert [r["label"] for r in rows] == ["one after the other", "overlapped"]
    assert all(r["right"] and r["ms"] > 0 for r in rows)


# ---- two GPUs: a rank per GPU --------------------------------------------------------------------

@needs_two_gpus
def test_with_two_gpus_each_rank_is_a_gpu_and_the_ring_is_right():
    group = ch28.Ranks([np.ones(1001, np.float32), np.full(1001, 2, np.float32)])
    assert not group.simulated and group.gpu_ids == [0, 1]
    ch28.reference_ring_allreduce(group)
    assert all(np.array_equal(b, np.full(1001, 3, np.float32)) for b in group.gather())
    before, after = ch28.run_ring(ch28.reference_ring_allreduce, ranks=2, m=4099)
    assert np.array_equal(after, np.broadcast_to(before.sum(axis=0), after.shape))


@needs_two_gpus
def test_with_two_gpus_peer_copies_and_the_nccl_comparison_run():
    rows = ch28.peer_bandwidth(sizes=(1 << 20,), repeats=3)
    assert {r["what"] for r in rows} == {"GPU 0 → GPU 1", "GPU 1 → GPU 0", "GPU 0 → GPU 0"}
    assert all(r["GB/s"] > 0 for r in rows)
    rows = ch28.measure_allreduce(ch28.reference_ring_allreduce, gpus=2, sizes=(4096, 1 << 20),
                                  repeats=2, warmup=1)
    ring = [r for r in rows if r["impl"] == "your ring"]
    assert all(r["right"] for r in ring)
    assert all(r["busbw"] == pytest.approx(r["algbw"]) for r in rows if r["ms"] == r["ms"])
