"""Chapter 9: do the histogram checks pass correct kernels written several ways and fail every
classic histogram bug (no atomics, a missing barrier, an unzeroed or partly zeroed private copy, a
merge that stores, one byte per thread, a forgotten last run) with a verdict that says what went
wrong? Are the inputs structured as the chapter says, and is the bound exercise judged to float64
precision?"""

import numpy as np
import pytest
from numba import cuda, uint32

import autograder as ag
from autograder.checks import CheckFailed

from verdicts import judge_entry
from verdicts import verdict_text as _verdict

ch09 = ag.problems.ch09
NUM_BINS = 256
CPU = not ag.backend.is_gpu




# ---- 9.1 histogram_global ----------------------------------------------------------------------

@cuda.jit
def global_ok(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def global_ok_grid_stride_early_return(data, hist):
    start = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if start >= data.size:
        return
    for i in range(start, data.size, cuda.gridsize(1)):
        cuda.atomic.add(hist, int(data[i]), np.uint32(1))


@cuda.jit
def global_no_atomics(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        hist[data[i]] += 1


@cuda.jit
def global_no_guard(data, hist):
    i = cuda.grid(1)
    cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def global_bins_of_four(data, hist):
    # PMPP's letters-in-groups-of-four example, misapplied: 64 bins of 4 values.
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i] // 4, 1)


@cuda.jit
def global_threadidx_only(data, hist):
    i = cuda.threadIdx.x
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)


RACE_GLOBAL = "global-memory race on the output `hist`"
GLOBAL_CASES = {
    # name: (kernel, None if correct else fragments the CPU-mode verdict must contain, whether
    # it is wrong only by a race that may hide on a GPU)
    "global_ok": (global_ok, None, False),
    "global_ok_grid_stride_early_return": (global_ok_grid_stride_early_return, None, False),
    "global_no_atomics": (global_no_atomics, (RACE_GLOBAL, "hist[data[i]] += 1",
                                              "cuda.atomic.add(hist, bin, 1)"), True),
    "global_no_guard": (global_no_guard, ("out of bounds", "guard the body with `if i < n:`"),
                        False),
    "global_bins_of_four": (global_bins_of_four, ("the bins add up to 1501",
                                                  "every byte was counted once, but some in the "
                                                  "wrong bin"), False),
    "global_threadidx_only": (global_threadidx_only, ("counts too many",
                                                      "counted by one thread only"), False),
}


@pytest.mark.parametrize("name", sorted(GLOBAL_CASES))
def test_global_submission_verdict(name):
    """Is each 9.1 kernel judged as it should be (pass, or fail for the right reason)?"""
    judge_entry(ch09.histogram_global, GLOBAL_CASES, name)


@pytest.mark.skipif(not CPU, reason="the race detector is CPU mode's; a GPU may not show the race")
def test_histogram_without_atomics_fails_every_time_and_counts_nothing_lost():
    """Does the non-atomic global histogram fail on every run, although the simulator itself
    usually loses no count (so only the detector can catch it)?"""
    case = ch09.histogram_global.cases()[0]
    d_hist = cuda.to_device(np.zeros(NUM_BINS, np.uint32))
    global_no_atomics[case.blocks, case.threads](cuda.to_device(case.inputs["data"]), d_hist)
    assert d_hist.copy_to_host().sum() <= case.size      # never more than n, usually exactly n
    for _ in range(3):
        with pytest.raises(CheckFailed) as info:
            ch09.histogram_global.check(global_no_atomics)
        assert RACE_GLOBAL in str(info.value) and "GlobalMemoryRace" in str(info.value)


# ---- 9.2 histogram_private ----------------------------------------------------------------------

@cuda.jit
def private_ok(data, hist):
    bins = cuda.shared.array(NUM_BINS, uint32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, data[i], 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if bins[b] != 0:
            cuda.atomic.add(hist, b, bins[b])


@cuda.jit
def private_ok_contiguous_while(data, hist):
    # Contiguous partitioning (correct, uncoalesced), while loops, an int32 private histogram.
    bins = cuda.shared.array(256, np.int32)
    t = cuda.threadIdx.x
    b = t
    while b < 256:
        bins[b] = 0
        b += cuda.blockDim.x
    cuda.syncthreads()
    threads = cuda.gridsize(1)
    chunk = (data.size + threads - 1) // threads
    start = cuda.grid(1) * chunk
    for i in range(start, min(start + chunk, data.size)):
        cuda.atomic.add(bins, data[i], 1)
    cuda.syncthreads()
    b = t
    while b < 256:
        cuda.atomic.add(hist, b, bins[b])
        b += cuda.blockDim.x


def _private(zero="all", first_barrier=True, second_barrier=True, shared_atomic=True,
             merge="atomic", loop="grid"):
    @cuda.jit
    def kernel(data, hist):
        bins = cuda.shared.array(NUM_BINS, uint32)
        t = cuda.threadIdx.x
        if zero == "all":
            for b in range(t, NUM_BINS, cuda.blockDim.x):
                bins[b] = 0
        elif zero == "one":
            bins[t] = 0
        if first_barrier:
            cuda.syncthreads()
        if loop == "grid":
            start, stride = cuda.grid(1), cuda.gridsize(1)
        elif loop == "block":
            start, stride = t, cuda.blockDim.x
        else:                      # one byte per thread
            start, stride = cuda.grid(1), data.size + 1
        for i in range(start, data.size, stride):
            if shared_atomic:
                cuda.atomic.add(bins, data[i], 1)
            else:
                bins[data[i]] += 1
        if second_barrier:
            cuda.syncthreads()
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            if merge == "atomic":
                cuda.atomic.add(hist, b, bins[b])
            else:
                hist[b] = bins[b]
    return kernel


RACE_SHARED = "shared-memory race on `bins`"
PRIVATE_CASES = {
    "private_ok": (private_ok, None, False),
    "private_ok_contiguous_while": (private_ok_contiguous_while, None, False),
    "private_reference": (ch09.reference_private(), None, False),
    "private_no_first_barrier": (_private(first_barrier=False),
                                 (RACE_SHARED, "updated (atomically)", "after zeroing it"), True),
    "private_no_second_barrier": (_private(second_barrier=False),
                                  (RACE_SHARED, "again after counting"), True),
    "private_plain_shared_increment": (_private(shared_atomic=False),
                                       (RACE_SHARED, "bins[data[i]] += 1",
                                        "Shared-memory bins need cuda.atomic.add too"), True),
    "private_merge_stores": (_private(merge="store"),
                             (RACE_GLOBAL, "hist[b] = bins[b]", "overwrite the others'"), False),
    "private_not_zeroed": (_private(zero="none"), ("counts too many", "set to zero"), False),
    "private_zeroes_one_bin_per_thread": (_private(zero="one"),
                                          ("bins 0 to 63 are right", "range(cuda.threadIdx.x, "
                                                                     "NUM_BINS, cuda.blockDim.x)"),
                                          False),
    "private_one_byte_per_thread": (_private(loop="one"), ("exactly the first 192 bytes",
                                                           "Loop with a grid stride"), False),
    "private_block_stride": (_private(loop="block"), ("every byte was counted 3 times",
                                                      "cuda.gridsize(1)"), False),
}


@pytest.mark.parametrize("name", sorted(PRIVATE_CASES))
def test_private_submission_verdict(name):
    """Is each 9.2 kernel judged as it should be (pass, or fail for the right reason)?"""
    judge_entry(ch09.histogram_private, PRIVATE_CASES, name)


@cuda.jit
def private_global_atomics_only(data, hist):          # 9.1's grid-stride kernel, handed in for 9.2
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def private_copy_for_show(data, hist):                # a private copy, and a global atomic per byte
    bins = cuda.shared.array(NUM_BINS, uint32)
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, data[i], 1)
        cuda.atomic.add(hist, data[i], 1)


@pytest.mark.skipif(not CPU, reason="CPU mode counts the atomics; on a GPU the speed cell is the "
                                    "check (global atomics are far below its bar)")
@pytest.mark.parametrize("problem", ["histogram_private", "histogram_aggregate"])
def test_an_exercise_that_asks_for_privatization_checks_it(problem):
    problem = getattr(ch09, problem)
    assert problem.requires == ("shared_atomics",) and ch09.histogram_global.requires == ()
    failure = _verdict(problem, private_global_atomics_only, hidden=False)
    assert "this exercise asks for a privatized histogram: your kernel never updated a " \
           "shared-memory copy" in failure, failure
    assert "count each block's bytes in a private histogram in shared memory" in failure
    failure = _verdict(problem, private_copy_for_show, hidden=False)
    assert "atomic updates of `hist`" in failure and "(one per bin per block)" in failure, failure


@pytest.mark.skipif(not CPU, reason="CPU mode's atomic counts")
def test_privatized_kernels_pass_the_count_and_the_counts_are_right():
    from autograder import races
    from autograder.problem import Case
    data = ch09.make_bytes("text", 3001)
    for kernel, shared in ((ch09.reference_private(), True), (private_ok, True),
                           (private_global_atomics_only, False)):
        hist = np.zeros(NUM_BINS, np.uint32)
        with races.count_atomics() as counts:
            ch09.run_histogram(kernel, data, hist, 3, 64)
        assert (counts["shared"] > 0) is shared, counts
        assert counts["global"] <= 3 * NUM_BINS or not shared, counts
    ch09.check_privatized({"shared": 0, "global": 0}, 0, 2)           # no byte: nothing to ask
    launch = ch09.histogram_private.launch
    launch(private_ok, {"data": data}, {"hist": np.zeros(NUM_BINS, np.uint32)},
           Case(size=data.size, inputs={}, blocks=3, threads=64))
    with pytest.raises(ch09.NotPrivatized):
        launch(private_global_atomics_only, {"data": data},
               {"hist": np.zeros(NUM_BINS, np.uint32)},
               Case(size=data.size, inputs={}, blocks=3, threads=64))


# ---- 9.3 histogram_aggregate --------------------------------------------------------------------

def _aggregate(flush_last=True, flush_value="previous", restart=1):
    @cuda.jit
    def kernel(data, hist):
        bins = cuda.shared.array(NUM_BINS, uint32)
        t = cuda.threadIdx.x
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            bins[b] = 0
        cuda.syncthreads()
        previous = -1
        run = 0
        for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
            value = int(data[i])
            if value == previous:
                run += 1
            else:
                if run > 0:
                    if flush_value == "previous":
                        cuda.atomic.add(bins, previous, run)
                    else:
                        cuda.atomic.add(bins, value, run)
                previous = value
                run = restart
        if flush_last and run > 0:
            cuda.atomic.add(bins, previous, run)
        cuda.syncthreads()
        for b in range(t, NUM_BINS, cuda.blockDim.x):
            if bins[b] != 0:
                cuda.atomic.add(hist, b, bins[b])
    return kernel


@cuda.jit
def aggregate_ok_while_flush_on_change(data, hist):
    # A while loop, the run flushed when the next byte differs (looked ahead), int32 bins.
    bins = cuda.shared.array(256, np.int32)
    t = cuda.threadIdx.x
    for b in range(t, 256, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    run = 0
    while i < data.size:
        run += 1
        nxt = i + stride
        if nxt >= data.size or data[nxt] != data[i]:
            cuda.atomic.add(bins, data[i], run)
            run = 0
        i = nxt
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        cuda.atomic.add(hist, b, bins[b])


AGGREGATE_CASES = {
    "aggregate_ok": (_aggregate(), None),
    "aggregate_ok_while_flush_on_change": (aggregate_ok_while_flush_on_change, None),
    "aggregate_reference": (ch09.reference_aggregate(), None),
    "aggregate_private_without_runs": (private_ok, None),   # correct, only slower on skewed data
    "aggregate_last_run_lost": (_aggregate(flush_last=False),
                                ("a scanned page", "every thread's last run is missing")),
    "aggregate_flushes_new_value": (_aggregate(flush_value="new"),
                                    ("counted once, but some in the wrong bin",)),
    "aggregate_restarts_at_zero": (_aggregate(restart=0), ("every run is one byte short",
                                                           "`run = 1`")),
}


@pytest.mark.parametrize("name", sorted(AGGREGATE_CASES))
def test_aggregate_submission_verdict(name):
    """Is each 9.3 kernel judged as it should be (pass, or fail for the right reason)?"""
    judge_entry(ch09.histogram_aggregate, AGGREGATE_CASES, name)


# ---- the cases and inputs -----------------------------------------------------------------------

HISTOGRAMS = (ch09.histogram_global, ch09.histogram_private, ch09.histogram_aggregate)


def test_cases_are_structured_and_not_multiples_of_the_block():
    """Does every case name its content, do the visible cases of each exercise cover several
    kinds of input (9.2 with uniform bytes, 9.3 starting with a scanned page), are the sizes
    (but 1) not multiples of the block, and do the privatized ones launch 2 to 4 blocks with far
    fewer threads than bytes?"""
    for problem in HISTOGRAMS:
        visible, hidden = problem.cases(), problem.cases(hidden=True)
        assert len({ch09.kind_of(c.size) for c in visible + hidden}) == 4, problem.name
        for case in visible + hidden:
            assert case.inputs["data"].dtype == np.uint8 and case.inputs["data"].size == case.size
            assert ch09.KIND_LABELS[ch09.kind_of(case.size)] in case.describe()
            assert case.size == 1 or case.size % case.threads, (problem.name, case.size)
            if problem is not ch09.histogram_global:
                assert 2 <= case.blocks <= 4
                if case.size > 1000:
                    assert case.blocks * case.threads < case.size
        for case in visible[:2]:
            if problem is not ch09.histogram_global:
                assert case.blocks * case.threads * 4 < case.size   # many bytes per thread
            else:
                assert case.blocks == -(-case.size // case.threads)
    assert ch09.kind_of(ch09.histogram_private.cases()[1].size) == "uniform"
    assert ch09.kind_of(ch09.histogram_aggregate.cases()[0].size) == "page"


def test_inputs_have_the_structure_the_chapter_claims():
    """Uniform bytes use every bin evenly; text is ASCII led by the space; the image spreads over
    many bins; the scanned page puts ~90% of its bytes in bin 255, in long runs; all seeded."""
    n = 50_000
    uniform, text, image, page = (ch09.make_bytes(k, n, seed=7) for k in ch09.KINDS)
    assert np.count_nonzero(ch09.byte_counts(uniform)) == 256 and ch09.hot_fraction(uniform) < 0.01
    assert text.max() < 128 and int(np.argmax(ch09.byte_counts(text))) == ord(" ")
    assert 0.1 < ch09.hot_fraction(text) < 0.35
    assert np.count_nonzero(ch09.byte_counts(image)) > 100 and ch09.hot_fraction(image) < 0.1
    assert int(np.argmax(ch09.byte_counts(page))) == 255 and 0.8 < ch09.hot_fraction(page) < 0.97
    runs = 1 + np.count_nonzero(page[1:] != page[:-1])
    assert n / runs > 5                                             # long runs of equal bytes
    assert np.array_equal(ch09.make_bytes("page", n, seed=7), page)  # seeded
    big = ch09.make_bytes("text", (1 << 20) + 12345, seed=1)        # large sizes repeat a base
    assert big.size == (1 << 20) + 12345 and big.dtype == np.uint8


def test_speed_inputs_and_sizes():
    """Does 9.2 time uniform bytes and 9.3 a scanned page, at sizes whose own content (for the
    CPU baselines, made by make_inputs) is the same kind?"""
    rng = np.random.default_rng(0)
    assert ch09.hot_fraction(ch09.histogram_private.speed_inputs(rng, 100_000)["data"]) < 0.01
    assert ch09.hot_fraction(ch09.histogram_aggregate.speed_inputs(rng, 100_000)["data"]) > 0.8
    assert ch09.kind_of(ch09.histogram_private.gpu_sizes.speed) == "uniform"
    assert ch09.kind_of(ch09.histogram_aggregate.gpu_sizes.speed) == "page"
    for problem in (ch09.histogram_private, ch09.histogram_aggregate):
        assert problem.reference is not None and problem.speed is not None
        assert problem.speed.baseline in problem.baselines
        assert problem.bytes_moved(1 << 28) == (1 << 28) + 1024


def test_spec_sample_spec_and_baselines_agree():
    """Do the spec, the speed test's sampled spec and every CPU baseline give the same counts?"""
    data = ch09.make_bytes("page", 30_001, seed=3)
    expected = np.bincount(data, minlength=256).astype(np.float64)
    spec = ch09.histogram_private.expected(ag.problem.Case(size=data.size, inputs={"data": data}))
    np.testing.assert_array_equal(spec["hist"], expected)
    idx = np.array([0, 17, 255, 254])
    got, tol = ch09.histogram_private.sampled({"data": data}, idx)
    np.testing.assert_array_equal(got["hist"], expected[idx])
    assert not np.any(tol["hist"])
    for key, baseline in ch09.BASELINES.items():
        out = np.full(256, 7, np.uint32)
        baseline.run(data=data, hist=out)
        np.testing.assert_array_equal(out, expected, err_msg=key)


def test_diagnoses():
    """Does the verdict's hint name the bug behind each typical wrong histogram?"""
    data = ch09.make_bytes("uniform", 3001, seed=1)
    exp = ch09.byte_counts(data)
    cases = {
        "nothing was counted": np.zeros(256),
        "exactly the first 192 bytes": ch09.byte_counts(data[:192]),
        "counted 3 times": 3 * exp,
        "bins 0 to 63 are right": np.concatenate([exp[:64], exp[64:] + 1]),
        "some in the wrong bin": np.roll(exp, 1),
        "missing from the counts": exp - (np.arange(256) == 9),
        "counts too many": exp + (np.arange(256) == 9),
    }
    for fragment, got in cases.items():
        assert fragment in ch09.diagnose(data, got, blocks=3, threads=64), fragment


def test_zero_clears_device_and_tracked_arrays():
    """Does the launch's zeroing work on a device array and on a race-tracked host array?"""
    d = cuda.to_device(np.full(256, 5, np.uint32))
    ch09.zero(d)
    assert not d.copy_to_host().any()
    if CPU:
        from autograder import races
        tracked = races.track_outputs({"hist": np.full(256, 5, np.uint32)})["hist"]
        ch09.zero(tracked)
        assert not np.asarray(tracked).any()


# ---- 9.4 histogram_time_bound -------------------------------------------------------------------

def bound_ok(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return max(n / bandwidth, n / atomic_rate, hot_fraction * n / (copies * address_rate))


def bound_ok_min_rate(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    # The slowest stage as the smallest rate in bytes per second.
    return n / min(bandwidth, atomic_rate, copies * address_rate / hot_fraction)


def bound_sum(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return n / bandwidth + n / atomic_rate + hot_fraction * n / (copies * address_rate)


def bound_no_copies(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return max(n / bandwidth, n / atomic_rate, hot_fraction * n / address_rate)


def bound_no_atomic_rate(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return max(n / bandwidth, hot_fraction * n / (copies * address_rate))


def bound_rounded(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return float(f"{bound_ok(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):.4g}")


BOUNDS = {
    "bound_ok": (bound_ok, None),
    "bound_ok_min_rate": (bound_ok_min_rate, None),
    "bound_sum": (bound_sum, "the largest of three times"),
    "bound_no_copies": (bound_no_copies, "`seconds`[2]"),
    "bound_no_atomic_rate": (bound_no_atomic_rate, "`seconds`[0]"),
    "bound_rounded": (bound_rounded, "elements are wrong"),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bound_verdict(name):
    """Is each answer to the bound exercise judged as it should be?"""
    fn, expected = BOUNDS[name]
    failure = _verdict(ch09.histogram_time_bound, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        assert expected in failure, failure


def test_bound_worked_numbers():
    """Do the chapter's numbers hold: global atomics 100 GB/s on uniform bytes (atomic rate) and
    0.48 s on the page (hottest bin); privatized 2 TB/s on uniform bytes and hot-bin bound on the
    page; a 300 GB/s memory makes it memory bound?"""
    case = ch09.histogram_time_bound.cases()[0]
    exp = ch09.histogram_time_bound.expected(case)["seconds"]
    n = 1 << 28
    assert exp[0] == pytest.approx(n / 1e11) and n / exp[0] == pytest.approx(100e9)
    assert exp[1] == pytest.approx(0.9 * n / 5e8)
    assert exp[2] == pytest.approx(n / 2e12)
    assert exp[3] == pytest.approx(0.9 * n / (1056 * 1e9))
    assert exp[4] == pytest.approx(n / 3e11)
    hidden = ch09.histogram_time_bound.cases(hidden=True)[0]
    h = ch09.histogram_time_bound.expected(hidden)["seconds"]
    i = hidden.inputs
    terms = np.stack([i["n"] / i["bandwidth"], i["n"] / i["atomic_rate"],
                      i["hot_fraction"] * i["n"] / (i["copies"] * i["address_rate"])])
    np.testing.assert_allclose(h, terms.max(axis=0))
    assert set(np.argmax(terms, axis=0).tolist()) == {0, 1, 2}    # every ceiling binds sometimes
    assert (i["copies"] == 1).any() and (i["copies"] > 1).any()


# ---- on a GPU -----------------------------------------------------------------------------------

@pytest.mark.gpu
def test_measure_runs_every_kernel_and_checks_it():
    """On a GPU: does the chapter's measuring helper time the reference kernels (and CuPy, where
    installed) on every input, with right results?"""
    kernels = {"global": (global_ok, lambda n: ((n + 255) // 256, 256)),
               "private": (ch09.reference_private(), ch09.speed_shape),
               "aggregate": (ch09.reference_aggregate(), ch09.speed_shape)}
    rows = ch09.measure(kernels, n=(1 << 22) + 3, repeats=3)
    assert {r["kind"] for r in rows} == set(ch09.KINDS)
    assert all(r["right"] for r in rows), [r for r in rows if not r["right"]]
    assert all(r["gbps"] > 0 for r in rows)
