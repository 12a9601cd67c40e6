"""The CPU-mode shared-memory race detector: racy kernels are stopped every time, race-free ones
never are, and the report names the threads, the element and the lines."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import autograder as ag
from autograder import races
from autograder.checks import describe_exception

pytestmark = pytest.mark.skipif(ag.backend.name != "cpu", reason="the race detector is CPU mode's")

T = 4


@cuda.jit
def tiled_matmul(a, b, c, first_barrier, second_barrier):
    sa = cuda.shared.array((T, T), np.float32)
    sb = cuda.shared.array((T, T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = 0.0
    for t in range((a.shape[1] + T - 1) // T):
        sa[ty, tx] = a[row, t * T + tx] if row < a.shape[0] and t * T + tx < a.shape[1] else 0.0
        sb[ty, tx] = b[t * T + ty, col] if t * T + ty < b.shape[0] and col < b.shape[1] else 0.0
        if first_barrier:
            cuda.syncthreads()
        for k in range(T):
            acc += sa[ty, k] * sb[k, tx]
        if second_barrier:
            cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def block_sum(x, out, barrier):
    buf = cuda.shared.array(8, np.float32)
    i = cuda.threadIdx.x
    buf[i] = x[cuda.blockIdx.x * 8 + i]
    cuda.syncthreads()
    stride = 4
    while stride > 0:
        if i < stride:
            buf[i] += buf[i + stride]
        if barrier:
            cuda.syncthreads()
        stride //= 2
    if i == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit
def shared_histogram(values, bins):
    counts = cuda.shared.array(4, np.int32)
    i = cuda.threadIdx.x
    if i < 4:
        counts[i] = 0
    cuda.syncthreads()
    cuda.atomic.add(counts, values[i] % 4, 1)
    cuda.syncthreads()
    if i < 4:
        bins[i] = counts[i]


@cuda.jit
def histogram_peeking(values, bins):
    counts = cuda.shared.array(4, np.int32)
    i = cuda.threadIdx.x
    if i < 4:
        counts[i] = 0
    cuda.syncthreads()
    cuda.atomic.add(counts, values[i] % 4, 1)
    if i < 4:
        bins[i] = counts[i]          # read while other threads may still be adding


@cuda.jit
def own_slot_twice(x, out):
    buf = cuda.shared.array(16, np.float32)
    i = cuda.threadIdx.x
    buf[i] = x[i]
    buf[i] = buf[i] * 2.0            # the same thread reads back what it wrote: no race
    out[i] = buf[i]


def _matmul(first, second, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random((6, 7), dtype=np.float32)
    b = rng.random((7, 5), dtype=np.float32)
    c = np.full((6, 5), np.nan, np.float32)
    tiled_matmul[(2, 2), (T, T)](a, b, c, first, second)
    return a, b, c


def test_a_correct_tiled_matmul_runs_and_is_right():
    a, b, c = _matmul(True, True)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5)


@pytest.mark.parametrize("first, second, write_line, read_line", [
    (True, False, "sa[ty, tx] =", "acc += sa[ty, k]"),     # next tile written while this one is read
    (False, True, "sa[ty, tx] =", "acc += sa[ty, k]"),     # tile read before every thread wrote it
])
def test_a_missing_barrier_is_caught_every_time(first, second, write_line, read_line):
    for seed in range(5):
        with pytest.raises(races.SharedMemoryRace) as info:
            _matmul(first, second, seed)
        message = str(info.value)
        assert "shared-memory race on `s" in message and "thread" in message
        assert "no cuda.syncthreads() between them" in message
        assert "line " in message and ("sa[ty, tx] =" in message or "sb[ty, tx] =" in message)
        assert "acc += sa[ty, k] * sb[k, tx]" in message
    hint = describe_exception(message, "exception")
    assert "cuda.syncthreads()" in hint


def test_a_reduction_needs_a_barrier_per_step():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    block_sum[2, 8](x, out, True)
    np.testing.assert_array_equal(out, [x[:8].sum(), x[8:].sum()])
    with pytest.raises(races.SharedMemoryRace):
        block_sum[2, 8](x, out, False)


def test_atomics_do_not_race_with_each_other_but_do_with_a_plain_read():
    values = np.arange(16, dtype=np.int32)
    bins = np.zeros(4, np.int32)
    shared_histogram[1, 16](values, bins)
    np.testing.assert_array_equal(bins, [4, 4, 4, 4])
    with pytest.raises(races.SharedMemoryRace, match="updated \\(atomically\\)"):
        histogram_peeking[1, 16](values, bins)


def test_a_thread_rereading_its_own_element_is_not_a_race():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    own_slot_twice[1, 16](x, out)
    np.testing.assert_array_equal(out, 2 * x)


def test_the_recording_says_who_touched_what_and_when():
    with races.record() as accesses:
        _matmul(True, True)
    assert accesses
    kinds = {a.kind for a in accesses}
    assert kinds == {"read", "write"}
    assert {a.array for a in accesses} == {"sa", "sb"}
    blocks = {a.block for a in accesses}
    assert len(blocks) == 4
    # every write of a tile element happens in an even interval, reads after the barrier in odd ones
    first_block = [a for a in accesses if a.block == (0, 0, 0)]
    assert all(a.interval % 2 == 0 for a in first_block if a.kind == "write")
    assert all(a.interval % 2 == 1 for a in first_block if a.kind == "read")


def test_detection_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(races.RACE_CHECK_ENV, "0")
    _matmul(True, False)   # racy, not stopped: the result is whatever the schedule gave


# ---- global memory: the outputs of problems that ask for it ---------------------------------------

@cuda.jit
def histogram(data, hist, atomic):
    i = cuda.grid(1)
    if i < data.size:
        if atomic:
            cuda.atomic.add(hist, data[i], 1)
        else:
            hist[data[i]] += 1


@cuda.jit
def scale_own_element(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 2
        out[i] += 1          # a thread re-reading what it wrote: ordered, no race


@cuda.jit
def neighbour_after_barrier(x, out, shifted, across_blocks):
    # Each thread writes its element of `out`, waits at the barrier, then copies its left
    # neighbour's into `shifted`: ordered within a block, unordered across blocks.
    i = cuda.grid(1)
    out[i] = x[i]
    cuda.syncthreads()
    if cuda.threadIdx.x > 0 or (across_blocks and i > 0):
        shifted[i] = out[i - 1]


def _data(n=200, bins=5):
    return np.random.default_rng(3).integers(0, bins, n).astype(np.int32)


def test_a_histogram_without_atomics_races_every_time():
    data = _data()
    for _ in range(3):
        hist = races.track_outputs({"hist": np.zeros(5, np.int32)})["hist"]
        with pytest.raises(races.GlobalMemoryRace) as info:
            histogram[7, 32](data, hist, False)
        text = str(info.value)
        assert "global-memory race on the output `hist`" in text
        assert "hist[data[i]] += 1" in text


def test_an_atomic_histogram_is_race_free_and_right():
    data = _data()
    hist = races.track_outputs({"hist": np.zeros(5, np.int32)})["hist"]
    histogram[7, 32](data, hist, True)
    np.testing.assert_array_equal(np.asarray(hist), np.bincount(data, minlength=5))


def _two_outputs():
    tracked = races.track_outputs({"out": np.zeros(64, np.float32), "shifted": np.zeros(64, np.float32)})
    return tracked["out"], tracked["shifted"]


def test_threads_of_different_blocks_race_on_one_element_whatever_the_barriers():
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(races.GlobalMemoryRace, match="of different blocks are never ordered"):
        neighbour_after_barrier[2, 32](x, *_two_outputs(), True)


def test_global_accesses_ordered_by_a_barrier_or_by_one_thread_do_not_race():
    x = np.arange(64, dtype=np.float32)
    out, shifted = _two_outputs()
    neighbour_after_barrier[2, 32](x, out, shifted, False)
    assert np.asarray(shifted)[1:32].tolist() == x[:31].tolist()
    out2 = races.track_outputs({"out": np.zeros(64, np.float32)})["out"]
    scale_own_element[2, 32](x, out2)
    np.testing.assert_array_equal(np.asarray(out2), 2 * x + 1)


def test_each_launch_starts_afresh():
    # Two launches writing the same elements are ordered (one after the other): no race.
    x = np.arange(64, dtype=np.float32)
    out = races.track_outputs({"out": np.zeros(64, np.float32)})["out"]
    scale_own_element[2, 32](x, out)
    scale_own_element[2, 32](x, out)


def test_a_problem_that_asks_for_it_fails_a_non_atomic_histogram_with_the_race():
    from autograder.checks import U32  # noqa: F401  (the problem below is a minimal histogram)
    from autograder.problem import Problem, Sizes

    def launch(kernel, inputs, outputs, case):
        outputs["hist"][:] = 0      # counts start at zero (the poison is for the check)
        kernel[case.blocks, case.threads](inputs["data"], outputs["hist"])

    problem = Problem(
        "toy_histogram", title="toy", spec=lambda data, **k: {"hist": np.bincount(data, minlength=5)},
        make_inputs=lambda rng, n: {"data": rng.integers(0, 5, n).astype(np.int32)},
        outputs=lambda n: {"hist": ((5,), np.int32)},
        tolerance=lambda inputs, expected: {"hist": np.zeros(5)}, launch=launch,
        block_sizes=(32,), visible_block_size=32,
        cpu_sizes=Sizes(visible=(100,), hidden=()), gpu_sizes=Sizes(visible=(100,), hidden=()),
        race_check_outputs=True)

    @cuda.jit
    def plain(data, hist):
        i = cuda.grid(1)
        if i < data.size:
            hist[data[i]] += 1

    @cuda.jit
    def atomic(data, hist):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.add(hist, data[i], 1)

    assert problem.verdict(atomic, problem.cases()).passed
    verdict = problem.verdict(plain, problem.cases())
    assert not verdict.passed and "global-memory race" in verdict.message, verdict


# ---- barriers that not every thread of a block reaches -------------------------------------------

@cuda.jit
def tree_barrier_in_if(x, out):
    buf = cuda.shared.array(8, np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.blockIdx.x * 8 + t]
    cuda.syncthreads()
    stride = 4
    while stride > 0:
        if t < stride:
            buf[t] += buf[t + stride]
            cuda.syncthreads()                     # only the threads still adding get here
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit
def early_return(x, out, n):
    buf = cuda.shared.array(8, np.float32)
    t = cuda.threadIdx.x
    if t >= n:
        return
    buf[t] = x[t]
    cuda.syncthreads()
    out[t] = buf[(t + 1) % n]


@cuda.jit
def per_thread_trip_count(out):
    t = cuda.threadIdx.x
    for _ in range(t % 2 + 1):                      # threads 1, 3, ... loop twice
        cuda.syncthreads()
    out[t] = t


@cuda.jit
def two_barrier_lines(out):
    t = cuda.threadIdx.x
    if t < 4:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    out[t] = t


@cuda.jit
def count_in_branch(x, out):
    t = cuda.threadIdx.x
    if t < 4:
        out[0] = cuda.syncthreads_count(x[t] > 0)


@cuda.jit
def votes_out_of_range(x, out, n):
    # Threads past n still take part in every barrier and vote (with 0): legal.
    t = cuda.threadIdx.x
    v = x[t] > 0 if t < n else False
    c = cuda.syncthreads_count(v)
    a = cuda.syncthreads_and(v or t >= n)
    o = cuda.syncthreads_or(v)
    if t == 0:
        out[0], out[1], out[2] = c, a, o


@cuda.jit
def block_uniform_return(x, out, blocks_used):
    # A whole block leaves before its barriers (the condition depends on the block only): legal.
    if cuda.blockIdx.x >= blocks_used:
        return
    buf = cuda.shared.array(8, np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    out[cuda.blockIdx.x * 8 + t] = buf[7 - t]


@cuda.jit
def raises_while_others_wait(x, out):
    t = cuda.threadIdx.x
    if t == 3:
        out[100] = 1.0                              # out of bounds: the real error
    cuda.syncthreads()
    out[t] = x[t]


def test_a_barrier_inside_an_if_is_stopped_every_time_naming_the_line_and_threads():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    messages = set()
    for _ in range(4):
        with pytest.raises(races.BarrierDivergence) as info:
            tree_barrier_in_if[2, 8](x, out)
        messages.add(str(info.value))
    assert len(messages) == 1, messages            # the same words on every run
    message = messages.pop()
    assert message.startswith("cuda.syncthreads() not reached by every thread of block 0: "
                              "threads 0-3 wait at line ")
    assert "`cuda.syncthreads()" in message and "(their 2nd barrier)" in message
    assert "threads 4-7 finished without reaching it" in message
    assert "undefined" in message


def test_the_simulator_alone_would_pass_a_barrier_inside_an_if(monkeypatch):
    # The simulator, left to itself, releases that barrier and sums right: why the check exists.
    monkeypatch.setenv(races.RACE_CHECK_ENV, "0")
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    tree_barrier_in_if[2, 8](x, out)
    np.testing.assert_array_equal(out, [x[:8].sum(), x[8:].sum()])


def test_threads_that_return_before_a_barrier_are_named():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    early_return[1, 8](x, out, 8)                    # every thread stays: fine
    with pytest.raises(races.BarrierDivergence, match="threads 0-4 wait at line .* but threads "
                                                       "5-7 finished without reaching it"):
        early_return[1, 8](x, out, 5)


def test_barriers_in_a_loop_whose_trip_count_differs_per_thread():
    out = np.zeros(4, np.int32)
    with pytest.raises(races.BarrierDivergence,
                       match="threads 1, 3 wait at line .*their 2nd barrier.*threads 0, 2 "
                             "finished"):
        per_thread_trip_count[1, 4](out)


def test_two_different_barrier_lines_are_not_one_barrier():
    out = np.zeros(8, np.int32)
    with pytest.raises(races.BarrierDivergence) as info:
        two_barrier_lines[1, 8](out)
    message = str(info.value)
    assert "threads 0-3 wait at line" in message and "threads 4-7 at line" in message
    assert "two different cuda.syncthreads() calls are not one barrier" in message


def test_syncthreads_count_in_a_branch_is_caught_and_legal_votes_are_not():
    x = np.array([1, -1, 2, -2, 3, 0, 0, 0], np.float32)
    out = np.zeros(3, np.int32)
    with pytest.raises(races.BarrierDivergence, match="cuda.syncthreads_count"):
        count_in_branch[1, 8](x, out)
    votes_out_of_range[1, 8](x, out, 5)
    assert out.tolist() == [3, 0, 1]


def test_a_block_that_leaves_as_a_whole_and_2d_blocks_are_fine():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(16, np.float32)
    block_uniform_return[2, 8](x, out, 1)
    assert out[:8].tolist() == x[::-1].tolist()
    _matmul(True, True)                             # 2-D blocks with threads past the matrix


def test_another_error_is_reported_as_itself_not_as_a_barrier():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(IndexError):
        raises_while_others_wait[1, 8](x, out)


def test_barrier_checking_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(races.RACE_CHECK_ENV, "0")
    early_return[1, 8](np.arange(8, dtype=np.float32), np.zeros(8, np.float32), 5)
