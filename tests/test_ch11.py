"""Chapter 11: do the scan checks pass correct kernels written several ways (double-buffered or
in place with two barriers, a sequential loop, Brent-Kung on the thread totals, a chained
look-back) and fail every classic scan bug (in place with one barrier, inclusive/exclusive off by
one, a missing or misplaced carry, an up-sweep without its down-sweep, a look-back that waits for
a later tile, a tile index from blockIdx, a NaN taken for "not published", a tile status stored or
a published value loaded without an atomic) with a verdict that says what went wrong? Does the
error bound hold for every correct order of additions, while the bugs miss it by far?"""

import math

import numpy as np
import pytest
from numba import cuda, float32, int32

import autograder as ag
from autograder.checks import TINY32, gamma
from autograder.problem import Case
from autograder.problems.ch11 import specs as ch11_specs

from verdicts import NamedInCpuMode, required
from verdicts import verdict_text as _verdict

ch11 = ag.problems.ch11
CPU = not ag.backend.is_gpu
# Reading past the end of the input changes no output element on a GPU (the values read there
# only reach threads past n): only CPU mode, which checks every index, can name it.
OUT_OF_BOUNDS = "out of bounds"
MAX_THREADS = ch11.MAX_THREADS
BK_SECTION = 2 * MAX_THREADS
COARSEN = ch11.COARSEN
TILE_WORDS = ch11.TILE_WORDS


def _case(problem, n, threads, seed=3):
    """One case of ``problem`` with n elements and blocks of ``threads`` (a chosen launch)."""
    rng = np.random.default_rng(seed)
    return Case(size=n, inputs={"x": ch11.scan_inputs(n, rng)}, threads=threads,
                blocks=problem.blocks_for(n, threads))


def _judged(problem, fn, n, threads):
    return problem.verdict(fn, [_case(problem, n, threads)])


def _excess(problem, fn, n, threads):
    """max |got - expected| / tolerance of fn's output on one case (how far past the bound)."""
    case = _case(problem, n, threads)
    outcome = problem.run(fn, case)
    assert outcome.error is None, outcome.error
    got = outcome.outputs["y"].astype(np.float64)
    exp = problem.expected(case)["y"]
    tol = problem.tolerance_for(case.inputs["x"], threads)
    return float(np.max(np.abs(got - exp) / tol))


def _expect(problem, fn, expected, hidden=True):
    failure = _verdict(problem, fn, hidden=hidden and expected is None)
    if expected is None:
        assert failure is None, failure
        return
    assert failure is not None, "passed but is wrong"
    for fragment in expected:
        assert fragment in failure or not required(fragment), (fragment, failure)


# ---- 11.1 Kogge-Stone ---------------------------------------------------------------------------

def _kogge_stone(mode="double", exclusive=False, guard=True, limit=0):
    """Kogge-Stone variants: ``mode`` "double" (two buffers), "two_barriers" (PMPP's in-place,
    a register and two barriers per step), "one_barrier" (in place: races); ``limit`` > 0 stops
    the strides at a constant instead of blockDim.x."""
    @cuda.jit
    def kernel(x, y):
        buf = cuda.shared.array((2, MAX_THREADS), float32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + t
        j = i - 1 if exclusive else i          # PMPP's exclusive kernel: x[i - 1], 0 at t = 0
        if guard:
            buf[0, t] = x[j] if j < x.size and not (exclusive and t == 0) else float32(0)
        else:
            buf[0, t] = x[j]
        cuda.syncthreads()
        top = limit if limit else cuda.blockDim.x
        src = 0
        stride = 1
        while stride < top:
            if mode == "double":
                if t >= stride:
                    buf[1 - src, t] = buf[src, t] + buf[src, t - stride]
                else:
                    buf[1 - src, t] = buf[src, t]
                cuda.syncthreads()
                src = 1 - src
            elif mode == "two_barriers":
                v = buf[0, t]
                if t >= stride:
                    v += buf[0, t - stride]
                cuda.syncthreads()
                buf[0, t] = v
                cuda.syncthreads()
            else:
                if t >= stride:
                    buf[0, t] += buf[0, t - stride]
                cuda.syncthreads()
            stride *= 2
        if i < x.size:
            y[i] = buf[src, t]
    return kernel


@cuda.jit
def kogge_stone_sequential(x, y):
    # Correct and slow: thread 0 adds the section up in a loop (a chain of T - 1 additions): the
    # bound allows any order of additions.
    buf = cuda.shared.array(MAX_THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    buf[t] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    if t == 0:
        for k in range(1, cuda.blockDim.x):
            buf[k] += buf[k - 1]
    cuda.syncthreads()
    if i < x.size:
        y[i] = buf[t]


RACE = "shared-memory race"


def test_kogge_stone_correct_variants_pass():
    _expect(ch11.kogge_stone, _kogge_stone("double"), None)
    for fn in (_kogge_stone("two_barriers"), kogge_stone_sequential, ch11.reference_kogge_stone()):
        verdict = _judged(ch11.kogge_stone, fn, 150, 64)
        assert verdict.passed, verdict


KS_BUGS = {
    "one_barrier": (_kogge_stone("one_barrier"), (RACE, "Kogge-Stone in place", "two buffers")),
    "exclusive": (_kogge_stone(exclusive=True), ("exclusive scan", "allowed error")),
    "no_guard": (_kogge_stone(guard=False), (OUT_OF_BOUNDS,)),
}


@pytest.mark.parametrize("name", sorted(KS_BUGS))
def test_kogge_stone_bug_verdict(name):
    fn, expected = KS_BUGS[name]
    if RACE in expected[0] and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    if expected[0] == OUT_OF_BOUNDS and not CPU:
        pytest.skip("an out-of-bounds read that changes no output passes on a GPU; CPU mode, "
                    "which checks every index, stops it")
    _expect(ch11.kogge_stone, fn, expected)


def test_kogge_stone_fixed_block_size_fails_on_larger_blocks():
    """Strides that stop at 64 instead of blockDim.x: right with 64 threads; with 128 the
    verdict says each element holds only the last 64 elements' sum."""
    fn = _kogge_stone(limit=64)
    assert _judged(ch11.kogge_stone, fn, 150, 64).passed
    verdict = _judged(ch11.kogge_stone, fn, 300, 128)
    assert not verdict.passed
    assert "the last 64 elements" in verdict.hint and "stride < cuda.blockDim.x" in verdict.hint


# ---- 11.2 Brent-Kung ----------------------------------------------------------------------------

def _brent_kung(down_sweep=True, two_per_thread=True, down_barrier=True):
    @cuda.jit
    def kernel(x, y):
        xy = cuda.shared.array(BK_SECTION, float32)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        section = 2 * T
        start = cuda.blockIdx.x * section
        last = section if two_per_thread else T
        for k in range(t, last, T):
            xy[k] = x[start + k] if start + k < x.size else float32(0)
        stride = 1
        while stride < section:
            cuda.syncthreads()
            j = (t + 1) * 2 * stride - 1
            if j < section:
                xy[j] += xy[j - stride]
            stride *= 2
        if down_sweep:
            stride = T // 2
            while stride > 0:
                if down_barrier:
                    cuda.syncthreads()
                j = (t + 1) * 2 * stride - 1
                if j + stride < section:
                    xy[j + stride] += xy[j]
                stride //= 2
        cuda.syncthreads()
        for k in range(t, last, T):
            if start + k < x.size:
                y[start + k] = xy[k]
    return kernel


def test_brent_kung_correct_variants_pass():
    _expect(ch11.brent_kung, _brent_kung(), None)
    verdict = _judged(ch11.brent_kung, ch11.reference_brent_kung(), 150, 32)
    assert verdict.passed, verdict


BK_BUGS = {
    "up_sweep_only": (_brent_kung(down_sweep=False), ("down-sweep is missing",)),
    "one_element_per_thread": (_brent_kung(two_per_thread=False),
                               ("never written", "second half of every section",
                                "two, elements t and t + T")),
    "no_down_sweep_barrier": (_brent_kung(down_barrier=False), (RACE, "Brent-Kung")),
}


@pytest.mark.parametrize("name", sorted(BK_BUGS))
def test_brent_kung_bug_verdict(name):
    fn, expected = BK_BUGS[name]
    if RACE in expected[0] and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    _expect(ch11.brent_kung, fn, expected)


# ---- 11.3 the traffic of a hierarchical scan ------------------------------------------------------

def traffic_iterative(n, tile):
    total, m = 0, n
    while True:
        blocks = -(-m // tile)
        if blocks == 1:
            return total + 4 * (2 * m + blocks)
        total += 8 * (2 * m + blocks)
        m = blocks


def traffic_one_pass_only(n, tile):
    blocks = -(-n // tile)
    level = 4 * (2 * n + blocks)
    return level if blocks == 1 else level + traffic_one_pass_only(blocks, tile)


def test_scan_traffic_verdicts():
    _expect(ch11.scan_traffic, traffic_iterative, None)
    _expect(ch11.scan_traffic, lambda n, tile: float(ch11.hierarchical_bytes(n, tile)), None)
    _expect(ch11.scan_traffic, traffic_one_pass_only, ("4·(2m + B) more for adding the carries",))


def test_scan_traffic_worked_numbers():
    """2^28 in tiles of 4096: 16.006 bytes per element (the notebook's prediction)."""
    assert ch11.hierarchical_bytes(1 << 28, 4096) == 4_296_540_420
    assert ch11.hierarchical_bytes(4096, 4096) == 4 * (2 * 4096 + 1)
    assert ch11.hierarchical_bytes(4097, 4096) == 8 * (2 * 4097 + 2) + 4 * (2 * 2 + 1)


# ---- 11.4 hierarchical ------------------------------------------------------------------------------

def _sections(barrier_after_load=True, write_sums=True, coarsen_store=COARSEN, totals="ks"):
    """11.4's section kernel; ``totals`` "ks" (Kogge-Stone, as the notebook) or "bk"
    (Brent-Kung on the thread totals, padded tile left out: a correct variant)."""
    @cuda.jit
    def kernel(x, y, sums):
        tile = cuda.shared.array(TILE_WORDS, float32)
        part = cuda.shared.array((2, MAX_THREADS), float32)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        start = cuda.blockIdx.x * COARSEN * T
        for k in range(COARSEN):
            j = k * T + t
            tile[j + j // 32] = x[start + j] if start + j < x.size else float32(0)
        if barrier_after_load:
            cuda.syncthreads()
        running = float32(0)
        for k in range(COARSEN):
            j = t * COARSEN + k
            running += tile[j + j // 32]
            tile[j + j // 32] = running
        part[0, t] = running
        cuda.syncthreads()
        src = 0
        if totals == "ks":
            stride = 1
            while stride < T:
                if t >= stride:
                    part[1 - src, t] = part[src, t] + part[src, t - stride]
                else:
                    part[1 - src, t] = part[src, t]
                cuda.syncthreads()
                src = 1 - src
                stride *= 2
        else:                      # Brent-Kung on the T totals, in place in part[0]
            stride = 1
            while stride < T:
                j = (t + 1) * 2 * stride - 1
                if j < T:
                    part[0, j] += part[0, j - stride]
                cuda.syncthreads()
                stride *= 2
            stride = T // 4
            while stride > 0:
                j = (t + 1) * 2 * stride - 1
                if j + stride < T:
                    part[0, j + stride] += part[0, j]
                cuda.syncthreads()
                stride //= 2
        if t > 0:
            before = part[src, t - 1]
            for k in range(COARSEN):
                j = t * COARSEN + k
                tile[j + j // 32] += before
        cuda.syncthreads()
        for k in range(coarsen_store):
            j = k * T + t
            if start + j < y.size:
                y[start + j] = tile[j + j // 32]
        if write_sums and t == T - 1:
            sums[cuda.blockIdx.x] = part[src, t]
    return kernel


def _carries(mode="previous"):
    @cuda.jit
    def kernel(y, carries):
        b = cuda.blockIdx.x
        T = cuda.blockDim.x
        if mode == "none":
            return
        if mode == "previous" and b == 0:
            return
        carry = carries[b - 1] if mode == "previous" else carries[b]
        for k in range(COARSEN):
            i = b * COARSEN * T + k * T + cuda.threadIdx.x
            if i < y.size:
                y[i] += carry
    return kernel


SECTIONS_OK = _sections()
CARRIES_OK = _carries()


def test_hierarchical_correct_variants_pass():
    _expect(ch11.scan_hierarchical, (SECTIONS_OK, CARRIES_OK), None)
    verdict = _judged(ch11.scan_hierarchical, (_sections(totals="bk"), CARRIES_OK), 1500, 32)
    assert verdict.passed, verdict


H_BUGS = {
    "no_carries": ((SECTIONS_OK, _carries("none")), ("scanned on its own", "the carry",
                                                     "carries[b - 1]")),
    "carry_includes_own_tile": ((SECTIONS_OK, _carries("own")), (NamedInCpuMode("counted twice"),)),
    "sums_not_written": ((_sections(write_sums=False), CARRIES_OK), ("sums[cuda.blockIdx.x]",)),
    "no_barrier_after_load": ((_sections(barrier_after_load=False), CARRIES_OK),
                              (RACE, "the three phases share the tile")),
    "one_element_per_thread": ((_sections(coarsen_store=1), CARRIES_OK),
                               ("never written", NamedInCpuMode("COARSEN = 16 elements"))),
}


@pytest.mark.parametrize("name", sorted(H_BUGS))
def test_hierarchical_bug_verdict(name):
    fn, expected = H_BUGS[name]
    if RACE in expected[0] and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    _expect(ch11.scan_hierarchical, fn, expected)


# ---- 11.5 single pass -------------------------------------------------------------------------------

NOT_READY, AGGREGATE, PREFIX = ch11.NOT_READY, ch11.AGGREGATE, ch11.PREFIX


def _single_pass(look_back="decoupled", ticket=True, barrier_for_carry=True, publish="atomic",
                 read="atomic"):
    """The notebook's single-pass kernel; ``look_back``: "decoupled" (right), "none" (no carry),
    "own_total_as_prefix" (publishes its total as its prefix: the next tile gets only that),
    "own" (waits for its own tile: hangs), "nan_sentinel" (ignores `status`: a NaN value means
    "not published yet"); ``publish``: "atomic" (right) or "plain" (`status[b] = ...`);
    ``read``: how a published value is read, "atomic" (right) or "plain" (`aggregates[j]`)."""
    nan_sentinel = look_back == "nan_sentinel"
    plain_publish = publish == "plain"
    plain_read = read == "plain"

    @cuda.jit
    def kernel(x, y, status, aggregates, prefixes, counter):
        tile = cuda.shared.array(TILE_WORDS, float32)
        part = cuda.shared.array((2, MAX_THREADS), float32)
        tk = cuda.shared.array(1, int32)
        carry_shared = cuda.shared.array(1, float32)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        if t == 0:
            if ticket:
                tk[0] = cuda.atomic.add(counter, 0, 1)
            else:
                tk[0] = cuda.blockIdx.x
        cuda.syncthreads()
        b = tk[0]
        start = b * COARSEN * T
        for k in range(COARSEN):
            j = k * T + t
            tile[j + j // 32] = x[start + j] if start + j < x.size else float32(0)
        cuda.syncthreads()
        running = float32(0)
        for k in range(COARSEN):
            j = t * COARSEN + k
            running += tile[j + j // 32]
            tile[j + j // 32] = running
        part[0, t] = running
        cuda.syncthreads()
        src = 0
        stride = 1
        while stride < T:
            if t >= stride:
                part[1 - src, t] = part[src, t] + part[src, t - stride]
            else:
                part[1 - src, t] = part[src, t]
            cuda.syncthreads()
            src = 1 - src
            stride *= 2
        if t == 0:
            total = part[src, T - 1]
            carry = float32(0)
            if b > 0:
                aggregates[b] = total
                cuda.threadfence()
                if plain_publish:
                    status[b] = AGGREGATE
                elif not nan_sentinel:
                    cuda.atomic.exch(status, b, AGGREGATE)
                if nan_sentinel:
                    j = b - 1
                    while True:
                        p = cuda.atomic.add(prefixes, j, 0.0)
                        if p == p:
                            carry += p
                            break
                        a = cuda.atomic.add(aggregates, j, 0.0)
                        if a == a:
                            carry += a
                            j -= 1
                elif look_back != "none":
                    j = b if look_back == "own" else b - 1
                    while True:
                        s = cuda.atomic.add(status, j, 0)
                        if s == PREFIX:
                            cuda.threadfence()
                            carry += prefixes[j] if plain_read else cuda.atomic.add(prefixes, j, 0.0)
                            break
                        if s == AGGREGATE and look_back != "own":
                            cuda.threadfence()
                            carry += (aggregates[j] if plain_read
                                      else cuda.atomic.add(aggregates, j, 0.0))
                            j -= 1
            # the bug: a tile publishes its own total as its prefix
            prefixes[b] = total if look_back == "own_total_as_prefix" else carry + total
            cuda.threadfence()
            if plain_publish:
                status[b] = PREFIX
            elif not nan_sentinel:
                cuda.atomic.exch(status, b, PREFIX)
            carry_shared[0] = carry
        if barrier_for_carry:
            cuda.syncthreads()
        before = carry_shared[0]
        if t > 0:
            before += part[src, t - 1]
        for k in range(COARSEN):
            j = t * COARSEN + k
            tile[j + j // 32] += before
        cuda.syncthreads()
        for k in range(COARSEN):
            j = k * T + t
            if start + j < y.size:
                y[start + j] = tile[j + j // 32]
    return kernel


def test_single_pass_correct_passes():
    _expect(ch11.scan_single_pass, _single_pass(), None, hidden=False)


@pytest.mark.parametrize("unsigned", [True, False])
@pytest.mark.parametrize("shape, threads", [((128, 32), 256), ((64, 16), 64), ((96, 16), 96)])
def test_packed_scan_scans_with_either_index_type(shape, threads, unsigned):
    # The reference (signed indices) and its unsigned bench row, at the speed shape (128 threads
    # x 32) and at the checks' shapes (threads x 16; the block scan's warps need a multiple of
    # 32), over full tiles (the padded tile stepped by a constant) and a partial last one.
    from autograder.problems.ch11.references import PackedScan
    scan = PackedScan(shape, unsigned=unsigned)
    T, C = scan.shape(threads)
    n = 2 * T * C + 37
    x = np.random.default_rng(11).standard_normal(n).astype(np.float32)
    y = cuda.to_device(np.full(n, np.nan, np.float32))
    scan(cuda.to_device(x), y, threads)
    ref = np.cumsum(x, dtype=np.float64)
    got = y.copy_to_host()
    assert np.all(np.abs(got - ref) <= gamma(n) * np.cumsum(np.abs(x), dtype=np.float64) + TINY32)


SP_BUGS = {
    "no_look_back": (_single_pass("none"), ("scanned on its own", "keep looking back")),
    "own_total_as_prefix": (_single_pass("own_total_as_prefix"),
                            (NamedInCpuMode("only the total of section b - 1"),
                             NamedInCpuMode("prefixes[b] = carry + total"))),
    "tile_from_block_index": (_single_pass(ticket=False),
                              ("TileCounterError", "took 0 tile index(es)",
                               "blocks start in no guaranteed order")),
    "no_barrier_before_carry": (_single_pass(barrier_for_carry=False),
                                (RACE, "carry_shared", "thread 0 has stored the carry")),
    "plain_store_publishes_the_status": (
        _single_pass(publish="plain"),
        ("global-memory race on the tile status `status`", "`status[b] = PREFIX`",
         "only with atomics", "publish the value first, then cuda.threadfence()")),
    "plain_load_of_a_published_value": (
        _single_pass(read="plain"),
        ("global-memory race on the published value `prefixes`", "prefixes[j]",
         "L1 cache", "cuda.atomic.add(prefixes, j, 0.0)")),
}


@pytest.mark.parametrize("name", sorted(SP_BUGS))
def test_single_pass_bug_verdict(name):
    fn, expected = SP_BUGS[name]
    if (RACE in expected[0] or "global-memory race" in expected[0]) and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    if name == "tile_from_block_index" and not CPU:
        pytest.skip("on a GPU the ticket check is the same; kept to CPU mode for time")
    _expect(ch11.scan_single_pass, fn, expected)


@pytest.mark.skipif(not CPU, reason="a kernel that waits for ever cannot be stopped on a GPU")
def test_waiting_for_own_tile_hangs_with_a_clear_verdict(monkeypatch):
    """A look-back that starts at its own tile waits for ever: in CPU mode the check stops it
    and explains why blocks that wait for later (or their own) tiles never finish."""
    monkeypatch.setenv("AAG_CHECK_TIMEOUT", "3")
    verdict = _judged(ch11.scan_single_pass, _single_pass("own"), 1100, 32)
    assert not verdict.passed
    text = str(verdict)
    assert "stopped after 3 s" in text and "run one after another in index order" in text, text


@pytest.mark.skipif(not CPU, reason="a kernel that waits for ever cannot be stopped on a GPU")
def test_nan_as_not_published_hangs_on_a_nan_input_with_a_clear_verdict(monkeypatch):
    """A look-back that takes NaN for "not published" (the values' fill) is right on every input
    without a NaN, but a NaN in x is a value its tile really publishes: the next tile waits for
    ever, and the verdict says that a NaN of the input was taken for "not published"."""
    monkeypatch.setenv("AAG_CHECK_TIMEOUT", "3")
    problem = ch11.scan_single_pass
    fn = _single_pass("nan_sentinel")
    assert problem.verdict(fn, [_case(problem, 1100, 32)]).passed
    case = problem.nan_case()
    p = int(np.argmax(np.isnan(case.inputs["x"])))
    verdict = problem.verdict(fn, [case])
    assert not verdict.passed
    text = str(verdict)
    for fragment in (f"a NaN at x[{p}]", "stopped after 3 s", "for 'not published yet'",
                     "NaN is a real input", "Wait on status[j]"):
        assert fragment in text, (fragment, text)


def test_a_nan_input_is_a_graded_case_and_a_correct_kernel_passes_it():
    """Visible and hidden cases end with an input holding one NaN, past the first tile and
    before the last; its spec is NaN from the NaN on; the notebook's kernel (a status word per
    tile) passes it."""
    problem = ch11.scan_single_pass
    for hidden in (False, True):
        case = problem.cases(hidden=hidden)[-1]
        nan = np.isnan(case.inputs["x"])
        assert nan.sum() == 1
        p = int(np.argmax(nan))
        S = problem.section(case.threads)
        assert p // S < case.blocks - 1          # a tile after the NaN's tile looks back past it
        exp = problem.expected(case)["y"]
        assert not np.isnan(exp[:p]).any() and np.isnan(exp[p:]).all()
    case = problem.cases()[-1]
    assert problem.verdict(_single_pass(), [case]).passed


def test_single_pass_time_limit_is_short_in_cpu_mode(monkeypatch):
    monkeypatch.delenv("AAG_CHECK_TIMEOUT", raising=False)
    case = ch11.scan_single_pass.cases()[0]
    limit = ch11.scan_single_pass.time_limit(case)
    assert limit <= 15 if CPU else limit >= 20


# ---- the error bound -------------------------------------------------------------------------------

def test_bugs_miss_the_bound_by_far():
    """The classic bugs are off by hundreds to tens of thousands of times the allowed error (the
    worst element), so the bound is not what decides them."""
    assert _excess(ch11.kogge_stone, _kogge_stone(exclusive=True), 150, 64) > 1e3
    assert _excess(ch11.scan_hierarchical, (SECTIONS_OK, _carries("none")), 1100, 32) > 1e4
    assert _excess(ch11.scan_hierarchical, (SECTIONS_OK, _carries("own")), 1100, 32) > 1e4
    if CPU:   # on a GPU a tile often finds its predecessors still at AGGREGATE and sums them all
        assert _excess(ch11.scan_single_pass, _single_pass("own_total_as_prefix"), 1600, 32) > 1e4


def _f32_network(rows, kind):
    for step in ch11.network(kind, rows.shape[1]):
        dst = np.array([d for d, _ in step])
        src = np.array([s for _, s in step])
        rows[:, dst] = rows[:, dst] + rows[:, src]          # float32 arithmetic, rounded
    return rows


def _f32_tiles(x, T, totals_kind, restart):
    """Each tile of COARSEN·T scanned in float32 with three phases: sequential per thread, the
    totals scanned by ``totals_kind``, the prefix added (``restart``: the thread's running sum
    started again from its prefix, COARSEN more additions on a chain)."""
    S = COARSEN * T
    n = x.size
    pad = -n % S
    tiles = np.concatenate([x, np.zeros(pad, np.float32)]).reshape(-1, T, COARSEN)
    run = np.cumsum(tiles, axis=2, dtype=np.float32)
    totals = run[:, :, -1].copy()
    scanned = _f32_network(totals, totals_kind)
    before = np.concatenate([np.zeros((tiles.shape[0], 1), np.float32), scanned[:, :-1]], axis=1)
    if restart:
        local = np.cumsum(np.concatenate([before[:, :, None], tiles], axis=2), axis=2,
                          dtype=np.float32)[:, :, 1:]
    else:
        local = run + before[:, :, None]
    return local.reshape(tiles.shape[0], S), scanned[:, -1]


@pytest.mark.parametrize("totals_kind,restart,carries", [
    ("kogge-stone", False, "look-back"), ("brent-kung", True, "chained"),
    ("brent-kung", False, "hierarchical"), ("kogge-stone", True, "sequential-aggregates")])
def test_bound_holds_for_correct_orders(totals_kind, restart, carries):
    """float32 scans of 200,001 elements (tiles of 16·32: 391 tiles), computed in the orders the
    bound allows (three phases with either tree scan of the totals, the thread's running sum
    restarted from its prefix or not; carries by a look-back, a chain of prefixes, a hierarchy
    whose sums are scanned in turn, or aggregates added one by one back to tile 0) stay within
    the bound, and use a fair part of it in the worst element."""
    rng = np.random.default_rng(11)
    x = ch11.scan_inputs(200_001, rng)
    T = 32
    local, totals = _f32_tiles(x, T, totals_kind, restart)
    tiles = totals.size
    carry = np.zeros(tiles, np.float32)
    if carries == "chained":                      # prefix[b] = prefix[b-1] + total[b]
        prefix = np.float32(0)
        for b in range(tiles):
            carry[b] = prefix
            prefix = np.float32(prefix + totals[b])
    elif carries == "sequential-aggregates":      # tile b adds aggregates b-1 .. 0 one at a time
        for b in range(1, tiles):
            c = np.float32(0)
            for j in range(b - 1, -1, -1):
                c = np.float32(c + totals[j])
            carry[b] = c
    elif carries == "look-back":                  # every 7th prefix published: look back to it
        prefix = np.zeros(tiles, np.float32)
        for b in range(tiles):
            c, j = np.float32(0), b - 1
            while j >= 0:
                if j % 7 == 0:
                    c = np.float32(c + prefix[j])
                    break
                c = np.float32(c + totals[j])
                j -= 1
            carry[b] = c
            prefix[b] = np.float32(c + totals[b])
    else:                                         # hierarchical: the sums scanned the same way
        sums_local, _ = _f32_tiles(totals, T, totals_kind, restart)
        assert tiles <= COARSEN * T            # one tile of sums: two levels
        carry[1:] = sums_local.reshape(-1)[:tiles - 1]
    y = (local + carry[:, None]).reshape(-1)[:x.size].astype(np.float64)
    exact = np.cumsum(x.astype(np.float64))
    tol = ch11.whole_tolerance(x, T)
    ratio = np.abs(y - exact) / tol
    assert ratio.max() <= 1.0, ratio.max()
    assert ratio.max() > 1e-3            # the bound is not absurdly loose either


def test_section_bound_allows_any_order_and_first_element_exact():
    x = ch11.scan_inputs(1000, 4)
    tol = ch11.section_tolerance(x, 128)
    assert tol[0] <= TINY32 * 1.0001 and tol[128] <= TINY32 * 1.0001
    seq = np.concatenate([np.cumsum(x[s:s + 128], dtype=np.float32) for s in range(0, 1000, 128)])
    exact = ch11.section_scan(x, 128)
    assert np.all(np.abs(seq - exact) <= tol)
    assert np.isclose(tol[127], gamma(127) * np.abs(x[:128].astype(np.float64)).sum()
                      + TINY32)


def test_sampled_spec_matches_full_spec():
    """The speed tests' sampled expected values and tolerances agree with the full ones."""
    rng = np.random.default_rng(2)
    x = ch11_specs.scan_speed_inputs(rng, 50_000)["x"]
    idx = np.sort(rng.choice(x.size, 500, replace=False))
    exp, tol = ch11_specs._whole_sample({"x": x}, idx)
    full = ch11.inclusive_scan(x)
    assert np.allclose(exp["y"], full[idx], rtol=1e-12, atol=1e-9)
    assert np.allclose(tol["y"], ch11.whole_tolerance(x, ch11.SPEED_THREADS)[idx], rtol=1e-9)
    sec, _ = ch11.sampled_scan(x, idx, 512)
    assert np.allclose(sec, ch11.section_scan(x, 512)[idx], rtol=1e-12, atol=1e-9)


def test_cases_are_awkward_lengths():
    """Lengths that are not multiples of a section, lengths below one section, one element;
    inputs with an offset and some negatives."""
    for problem in (ch11.kogge_stone, ch11.brent_kung, ch11.scan_hierarchical,
                    ch11.scan_single_pass):
        cases = problem.cases() + problem.cases(hidden=True)
        sizes = [c.size for c in cases]
        assert 1 in sizes
        for c in cases:
            S = problem.section(c.threads)
            assert c.size == 1 or c.size % S != 0, (problem.name, c.size, S)
            assert c.blocks == math.ceil(c.size / S)
        assert any(c.size < problem.section(c.threads) for c in cases)
        assert any(c.size > 2 * problem.section(c.threads) for c in cases)
        x = np.concatenate([c.inputs["x"] for c in cases]).astype(np.float64)
        assert 0.02 < np.mean(x < 0) < 0.2


def test_cpu_baselines_agree_with_spec():
    x = ch11.scan_inputs(10_001, 9)
    exact = ch11.inclusive_scan(x)
    tol = gamma(x.size) * np.cumsum(np.abs(x.astype(np.float64)))
    for key, baseline in ch11.BASELINES.items():
        y = np.empty_like(x)
        baseline.run(x=x, y=y)
        assert np.all(np.abs(y - exact) <= tol), key


# ---- GPU only ----------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_references_at_speed_size():
    """On a GPU: the course's kernels scan 2^28 elements right (sampled)."""
    runners = {
        "hierarchical": ch11.hierarchical_runner(ch11.reference_hierarchical()),
        "single pass": ch11.single_pass_runner(ch11.reference_single_pass()),
        "one thread": ch11.single_pass_runner(ch11.single_pass_one_thread()),
        "chained": ch11.single_pass_runner(ch11.single_pass_chained()),
        "kogge-stone": ch11.sections_runner(ch11.reference_kogge_stone(), 256, 1),
        "brent-kung": ch11.sections_runner(ch11.reference_brent_kung(), 256, 2),
    }
    rows = ch11.measure(runners, repeats=3)
    assert all(r["right"] for r in rows), rows
