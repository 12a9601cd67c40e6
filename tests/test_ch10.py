"""Chapter 10: do the reduction checks pass correct kernels written several ways (interleaved or
convergent trees, shuffles down or xor, one or four accumulators, a loop or a tree over the warps'
partial sums, a mask from a ballot before the branch) and fail every classic reduction bug (a
missing barrier, a plain `out[0] +=`, half a segment, one element per thread, the last partial warp
skipped, a warp size of 32 assumed, a shuffle mask from cuda.activemask()) with a verdict that says
what went wrong? Does the error bound hold for correct fp32 code in any order,
while the bugs miss it by orders of magnitude? Is the bound exercise judged to float64 precision?"""

import math

import numpy as np
import pytest
from numba import cuda, float32, uint64

import autograder as ag
from autograder.checks import U32, gamma

from verdicts import judge_entry
from verdicts import verdict_text as _verdict

ch10 = ag.problems.ch10
CPU = not ag.backend.is_gpu
BLOCK_MAX = 1024
MAX_WARPS = 32


# ---- 10.1 reduce_tree ---------------------------------------------------------------------------

def _tree(load_second=True, barrier=True, atomic=True, start_stride="half", last_ok=True,
          skip_partial=False):
    @cuda.jit
    def kernel(x, out):
        s = cuda.shared.array(BLOCK_MAX, float32)
        t = cuda.threadIdx.x
        T = cuda.blockDim.x
        i = 2 * T * cuda.blockIdx.x + t
        n = x.size if last_ok else x.size - 1
        if skip_partial and 2 * T * (cuda.blockIdx.x + 1) > x.size:
            n = 0
        v = float32(0)
        if i < n:
            v = x[i]
        if load_second and i + T < n:
            v += x[i + T]
        s[t] = v
        cuda.syncthreads()
        stride = T // 2 if start_stride == "half" else T
        while stride > 0:
            if t < stride:
                s[t] += s[t + stride]
            if barrier:
                cuda.syncthreads()
            stride //= 2
        if t == 0:
            if atomic:
                cuda.atomic.add(out, 0, s[0])
            else:
                out[0] += s[0]
    return kernel


@cuda.jit
def tree_ok_range_shift(x, out):
    # A for loop over the steps with shifts, the load written as two guarded adds into a register.
    s = cuda.shared.array(BLOCK_MAX, float32)
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    base = cuda.blockIdx.x * (T << 1)
    acc = float32(0)
    for k in range(2):
        j = base + k * T + t
        if j < x.size:
            acc += x[j]
    s[t] = acc
    cuda.syncthreads()
    steps = 0
    while (1 << steps) < T:
        steps += 1
    for k in range(steps - 1, -1, -1):
        stride = 1 << k
        if t < stride:
            s[t] = s[t] + s[t + stride]
        cuda.syncthreads()
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


RACE_TREE = "shared-memory race on `s`"
RACE_OUT = "global-memory race on the output `out`"
TREE_CASES = {
    # name: (kernel, None if correct else fragments the CPU-mode verdict must contain, race only,
    #        run the hidden cases too)
    "tree_ok": (_tree(), None, False, True),
    "tree_ok_range_shift": (tree_ok_range_shift, None, False, False),
    "tree_no_barrier": (_tree(barrier=False), (RACE_TREE, "syncthreads() after the load"), True,
                        False),
    "tree_plain_add_to_out": (_tree(atomic=False), (RACE_OUT, "out[0] += s[0]",
                                                    "cuda.atomic.add(out, 0"), True, False),
    "tree_half_segment": (_tree(load_second=False), ("only the first half of each block's "
                                                     "segment",), False, False),
    "tree_last_element": (_tree(last_ok=False), ("x[600]", "`i < n`"), False, False),
    "tree_skips_partial_segment": (_tree(skip_partial=True), ("partial and was skipped",), False,
                                   False),
}


@pytest.mark.parametrize("name", sorted(TREE_CASES))
def test_tree_submission_verdict(name):
    """Is each 10.1 kernel judged as it should be (pass, or fail for the right reason)?"""
    fn, expected, race_only, hidden = TREE_CASES[name]
    judge_entry(ch10.reduce_tree, {name: (fn, expected, race_only)}, name, hidden=hidden)


# ---- 10.2 warp_sums -----------------------------------------------------------------------------

FULL_MASK = "~uint64(0) >> (64 - cuda.warpsize)"
ACTIVEMASK = ("shuffle outside its mask", "which cuda.activemask() returned at line",
              "not the lanes that must take part", FULL_MASK)


def _warp(offsets="warpsize", index="warpsize", mask="full", guard="zero", count="ceil",
          shuffle=True):
    @cuda.jit
    def kernel(x, sums):
        i = cuda.grid(1)
        if guard == "return" and i >= x.size:
            return
        v = float32(0)
        if i < x.size:
            v = x[i]
        if mask == "full":
            m = ~uint64(0) >> (64 - cuda.warpsize)
        elif mask == "active":
            m = cuda.activemask()
        else:
            m = 0xFFFFFFFF
        offset = cuda.warpsize // 2 if offsets == "warpsize" else 16
        while shuffle and offset > 0:
            v += cuda.shfl_down_sync(m, v, offset)
            offset //= 2
        W = cuda.warpsize if index == "warpsize" else 32
        w = i // W
        limit = sums.size if count == "ceil" else x.size // W
        if i % W == 0 and w < limit:
            sums[w] = v
    return kernel


@cuda.jit
def warp_ok_xor_laneid(x, sums):
    # A butterfly (xor) leaves the sum in every lane; the lane from cuda.laneid.
    i = cuda.grid(1)
    v = x[i] if i < x.size else float32(0)
    mask = ~uint64(0) >> (64 - cuda.warpsize)
    k = 1
    while k < cuda.warpsize:
        v += cuda.shfl_xor_sync(mask, v, k)
        k *= 2
    if cuda.laneid == 0 and i // cuda.warpsize < sums.size:
        sums[i // cuda.warpsize] = v


@cuda.jit
def warp_ok_ballot_before_branch(x, sums):
    # NVIDIA's pattern for a branch: the lanes with an element, by a ballot of the whole warp
    # before the branch; only they shuffle, and a lane adds only what a lane in the mask sent.
    i = cuda.grid(1)
    lane = cuda.laneid
    mask = cuda.ballot_sync(~uint64(0) >> (64 - cuda.warpsize), i < x.size)
    if i < x.size:
        have = cuda.popc(mask)
        v = x[i]
        offset = cuda.warpsize // 2
        while offset > 0:
            other = cuda.shfl_down_sync(mask, v, offset)
            if lane + offset < have:
                v += other
            offset //= 2
        if lane == 0:
            sums[i // cuda.warpsize] = v


WARP_CASES = {
    # name: (kernel, fragments (None: correct), which cases: "all" (visible and hidden),
    #        "visible", "cpu" (visible, CPU mode only: a GPU may well pass it), or "64" (the first
    #        hidden case, at warp size 64: CPU mode only))
    "warp_ok": (_warp(), None, "all"),
    "warp_ok_xor_laneid": (warp_ok_xor_laneid, None, "visible"),
    "warp_ok_ballot_before_branch": (warp_ok_ballot_before_branch, None, "all"),
    "warp_activemask_mask": (_warp(mask="active"), ACTIVEMASK, "cpu"),
    "warp_activemask_mask_at_64": (_warp(mask="active"), ACTIVEMASK, "64"),
    "warp_hard_coded_32_mask": (_warp(offsets="16", index="32", mask="literal"),
                                ("at warp size 64", "leaves out its own lane",
                                 FULL_MASK), "64"),
    "warp_hard_coded_32_index": (_warp(offsets="16", index="32"),
                                 ("at warp size 64", "assumes 32", "cuda.warpsize"), "64"),
    "warp_offsets_from_16": (_warp(offsets="16"), ("first half of its warp",
                                                   "cuda.warpsize // 2"), "64"),
    "warp_skips_last_partial_warp": (_warp(count="floor"), ("n = 501 values",
                                                            "the last warp is partial",
                                                            "ceil(n / warpsize)"), "visible"),
    # Lanes past n return, then the rest shuffle with a mask naming them: undefined behaviour,
    # which the H200 computed right (every GPU case passed there); CPU mode names it, and on a
    # GPU the judge's CPU-mode run at the other warp size fails it (the bank's
    # warp_sums/wrong_returns_before_shuffles).
    "warp_returns_early": (_warp(guard="return"), ("lanes that did not take part",
                                                   "take part with 0"), "cpu"),
    "warp_no_shuffles": (_warp(shuffle=False), ("only lane 0's own element",), "visible"),
}


@pytest.mark.parametrize("name", sorted(WARP_CASES))
def test_warp_submission_verdict(name):
    """Is each 10.2 kernel judged as it should be, the warp-size assumptions at warp size 64?"""
    fn, expected, which = WARP_CASES[name]
    problem = ch10.warp_sums
    if which in ("64", "cpu") and not CPU:
        pytest.skip("CPU mode only: warp size 64, a warp that CPU mode splits on purpose, or a "
                    "shuffle naming exited lanes (undefined; a GPU may compute it right)")
    if which == "64":
        case = problem.cases(hidden=True)[0]
        assert case.size[1] == 64
        verdict = problem.verdict(fn, [case])
        failure = None if verdict.passed else str(verdict)
    else:
        failure = _verdict(problem, fn, hidden=which == "all")
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        if CPU:
            for fragment in expected:
                assert fragment in failure, (fragment, failure)


@pytest.mark.skipif(not CPU, reason="the simulator's warp size switch is CPU mode's")
def test_hard_coded_32_passes_at_32_and_fails_at_64():
    """Does a kernel that assumes 32 pass every case at warp size 32 (so NVIDIA code is not failed
    where the device's warp size is graded) and fail the hidden run, which has 64?"""
    kernel = _warp(offsets="16", index="32", mask="literal")
    problem = ch10.warp_sums
    hidden = problem.cases(hidden=True)
    assert {c.size[1] for c in hidden} == {32, 64}
    assert problem.verdict(kernel, [c for c in hidden if c.size[1] == 32]).passed
    assert not problem.verdict(kernel, [c for c in hidden if c.size[1] == 64][:1]).passed


def test_warp_cases_and_portability_hooks():
    """Visible cases run at the device's warp size; hidden ones in CPU mode at 32 and 64, the
    first at 64; portability_cases makes CPU-sized 64-wide cases on any backend; on a GPU the
    note says plainly what was not checked."""
    problem = ch10.warp_sums
    for case in problem.cases():
        assert case.size[1] == ch10.device_warp_size() and case.threads == 64
    hidden = problem.cases(hidden=True)
    assert all(c.threads in ch10.WARP_BLOCKS and c.threads % 64 == 0 for c in hidden)
    fixed = problem.cases() + hidden[:len(problem.cpu_sizes.hidden)]
    assert all(c.size[0] == 1 or c.size[0] % 32 for c in fixed)
    if CPU:
        assert hidden[0].size[1] == 64 and {c.size[1] for c in hidden} == {32, 64}
        assert problem.gpu_note() == ""
    portable = problem.portability_cases(64, seed=3)
    assert portable and all(c.size[1] == 64 and c.inputs["warp_size"] == 64 for c in portable)
    assert all(c.size[0] <= 2005 for c in portable)   # CPU-sized: 4 × the largest visible at most
    note = ch10.PORTABILITY_NOTE.format(warp=32, other="64")
    assert "NOT checked" in note and "warp size 32" in note


# ---- 10.3 reduce_sum ----------------------------------------------------------------------------

def _grid_sum(loop="grid", stage2="shuffle", atomic=True, partial_barrier=True, mask="full"):
    @cuda.jit
    def kernel(x, out):
        partials = cuda.shared.array(MAX_WARPS, float32)
        acc = float32(0)
        if loop == "grid":
            start, stride = cuda.grid(1), cuda.gridsize(1)
        elif loop == "block":
            start, stride = cuda.threadIdx.x, cuda.blockDim.x
        else:                                   # one element per thread
            start, stride = cuda.grid(1), x.size + 1
        for i in range(start, x.size, stride):
            acc += x[i]
        lane = cuda.threadIdx.x % cuda.warpsize
        warp = cuda.threadIdx.x // cuda.warpsize
        if mask == "full":
            m = ~uint64(0) >> (64 - cuda.warpsize)
        else:
            m = cuda.activemask()
        offset = cuda.warpsize // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(m, acc, offset)
            offset //= 2
        if stage2 == "first_warp_only":
            if cuda.threadIdx.x == 0:
                cuda.atomic.add(out, 0, acc)
            return
        if lane == 0:
            partials[warp] = acc
        if partial_barrier:
            cuda.syncthreads()
        if stage2 == "serial":
            if cuda.threadIdx.x == 0:
                total = float32(0)
                for w in range((cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize):
                    total += partials[w]
                if atomic:
                    cuda.atomic.add(out, 0, total)
                else:
                    out[0] += total
            return
        if warp == 0:
            warps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
            acc = partials[lane] if lane < warps else float32(0)
            offset = cuda.warpsize // 2
            while offset > 0:
                acc += cuda.shfl_down_sync(m, acc, offset)
                offset //= 2
            if lane == 0:
                if atomic:
                    cuda.atomic.add(out, 0, acc)
                else:
                    out[0] += acc
    return kernel


@cuda.jit
def sum_ok_hard_coded_32(x, out):
    # NVIDIA-only code: 32 written out. Right at the device's warp size (10.3 is graded there).
    partials = cuda.shared.array(32, float32)
    acc = float32(0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
    t = cuda.threadIdx.x
    if t % 32 == 0:
        partials[t // 32] = acc
    cuda.syncthreads()
    if t < 32:
        acc = partials[t] if t < cuda.blockDim.x // 32 else float32(0)
        for offset in (16, 8, 4, 2, 1):
            acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
        if t == 0:
            cuda.atomic.add(out, 0, acc)


@cuda.jit
def sum_ok_shared_tree(x, out):
    # No shuffles: a float64 running sum, then a convergent tree in shared memory.
    s = cuda.shared.array(BLOCK_MAX, float32)
    acc = 0.0
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
    t = cuda.threadIdx.x
    s[t] = acc
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


SUM_CASES = {
    "sum_ok": (_grid_sum(), None, False, True),
    "sum_ok_serial_partials": (_grid_sum(stage2="serial"), None, False, False),
    "sum_ok_hard_coded_32": (sum_ok_hard_coded_32, None, False, False),
    "sum_ok_shared_tree": (sum_ok_shared_tree, None, False, False),
    "sum_one_element_per_thread": (_grid_sum(loop="one"), ("exactly the first 512 elements",
                                                           "grid stride"), False, False),
    "sum_block_stride": (_grid_sum(loop="block"), ("counted 4 times", "cuda.gridsize(1)"),
                         False, False),
    "sum_first_warp_only": (_grid_sum(stage2="first_warp_only"), ("only the first warp",),
                            False, False),
    "sum_plain_add_to_out": (_grid_sum(atomic=False), (RACE_OUT, "cuda.atomic.add(out, 0"),
                             True, False),
    "sum_no_barrier_before_partials": (_grid_sum(partial_barrier=False),
                                       ("shared-memory race on `partials`",), True, False),
    # CPU mode only (the flag): on a GPU activemask() usually names the whole warp.
    "sum_activemask_mask": (_grid_sum(mask="active"), ACTIVEMASK + ("before any if",), True,
                            False),
}


@pytest.mark.parametrize("name", sorted(SUM_CASES))
def test_sum_submission_verdict(name):
    """Is each 10.3 kernel judged as it should be (pass, or fail for the right reason)?"""
    fn, expected, race_only, hidden = SUM_CASES[name]
    if name == "sum_ok_hard_coded_32" and ag.backend.warp_size != 32:
        pytest.skip("NVIDIA-only code: right at warp size 32 only")
    judge_entry(ch10.reduce_sum, {name: (fn, expected, race_only)}, name, hidden=hidden)


# ---- the error bound ----------------------------------------------------------------------------

def _f32_chain(values) -> np.float32:
    acc = np.float32(0)
    for v in values:
        acc = np.float32(acc + np.float32(v))
    return acc


def _f32_tree(values) -> np.float32:
    v = np.asarray(values, np.float32)
    while v.size > 1:
        if v.size % 2:
            v = np.append(v, np.float32(0))
        v = (v[0::2] + v[1::2]).astype(np.float32)
    return v[0] if v.size else np.float32(0)


def test_bound_holds_for_correct_fp32_orders():
    """Summing in fp32 the way a correct kernel may (each thread's chain, a tree or a loop over the
    warps, the blocks' atomics in random orders, largest first) stays within the exercise's
    bound, on the inputs the checks use; and the bound is c·u·Σ|x| as the docstring says."""
    rng = np.random.default_rng(5)
    for n, blocks, threads in ((3001, 4, 128), (2895, 2, 64), (100, 2, 128), (1025, 3, 64)):
        x = ch10.make_values(n, rng)
        exact = ch10.exact_sum(x)
        tol = ch10.sum_tolerance(x, ch10.grid_stride_chain(n, blocks, threads, 32))
        grid = blocks * threads
        per_thread = [_f32_chain(x[t::grid]) for t in range(grid)]
        for order in range(20):
            block_sums = []
            for b in range(blocks):
                mine = per_thread[b * threads:(b + 1) * threads]
                warps = [_f32_tree(mine[w:w + 32]) for w in range(0, threads, 32)]
                block_sums.append(_f32_chain(warps) if order % 2 else _f32_tree(warps))
            arrival = rng.permutation(blocks) if order else np.argsort(np.abs(block_sums))[::-1]
            got = _f32_chain([block_sums[b] for b in arrival])
            assert abs(float(got) - exact) <= tol, (n, blocks, threads, order)
        chain = ch10.grid_stride_chain(n, blocks, threads, 32)
        assert chain == -(-n // grid) + 3 + 5 + threads // 32 + blocks
        assert tol == pytest.approx(gamma(chain) * ch10.magnitude(x), rel=1e-6)
    assert ch10.tree_chain(8, 64) == 1 + 6 + 8
    assert ch10.warp_chain(64) == 6
    assert gamma(10) == pytest.approx(10 * U32, rel=1e-6)


def bug_margins(x, blocks, threads, warp=32):
    """How far each classic bug's sum lands from the exact one, in units of the allowed error
    (at this launch): the smallest of them is what a check can rely on."""
    x64 = np.asarray(x, np.float64)
    n = x64.size
    exact = float(x64.sum())
    tol = ch10.sum_tolerance(x, ch10.grid_stride_chain(n, blocks, threads, warp))
    wrong = {"last element dropped": exact - x64[-1]}
    if n % warp:
        wrong["last partial warp skipped"] = float(x64[:n - n % warp].sum())
    if blocks * threads < n:
        wrong["one element per thread"] = float(x64[:blocks * threads].sum())
    wrong["first element counted twice"] = exact + x64[0]
    return {k: abs(v - exact) / tol for k, v in wrong.items()}


SMALL = 100_000      # CPU mode's cases, and a GPU's small ones, are at most this long


def _cases_on(problem, gpu: bool, monkeypatch) -> list:
    """The problem's visible and hidden cases with the sizes of a GPU run or of CPU mode, made on
    whichever backend runs the test (the sizes follow the device the cases are made for)."""
    import types

    from autograder.grading import problem as problem_module
    monkeypatch.setattr(problem_module.device, "current", lambda: types.SimpleNamespace(
        is_gpu=gpu, name="cuda" if gpu else "simulator", warp_size=32))
    return problem.cases() + problem.cases(hidden=True)


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu-sizes", "gpu-sizes"])
def test_bugs_miss_the_bound_by_far(gpu, monkeypatch):
    """On every case of at most SMALL elements (all of CPU mode's, and a GPU's small ones) every
    classic bug, even the smallest (one element dropped or doubled), misses by more than 50 times
    the allowed error (10 on the hidden case 4 times the largest visible size). A GPU's cases of
    millions of elements add through a chain of tens of thousands of atomics, whose float32 bound
    is wider than one element: there one element per thread must miss by more than 50 times, and
    the single-element bugs are left to the small cases every kernel also runs."""
    for problem in (ch10.reduce_tree, ch10.reduce_sum):
        cases = [c for c in _cases_on(problem, gpu, monkeypatch) if c.size > 1]
        small = [c for c in cases if c.size <= SMALL]
        assert len(small) >= 4, (problem.name, [c.size for c in cases])
        largest_visible = max(s for s in problem.cpu_sizes.visible)
        for case in cases:
            margins = bug_margins(case.inputs["x"], case.blocks, case.threads)
            if case.size > SMALL:
                assert margins["one element per thread"] > 50, (problem.name, case.describe())
                continue
            # The hidden case 4 times the largest visible one has a longer chain of additions (a
            # wider bound): one element dropped misses by about 20 times the bound there.
            bar = 50 if case.size <= largest_visible else 10
            assert min(margins.values()) > bar, (problem.name, case.describe(), margins)


def test_tolerance_uses_the_launch():
    """The allowed error grows with the blocks (the atomics' chain) and a thread's share: the
    judge computes it per case."""
    x = ch10.make_values(3001, 1)
    small = ch10.sum_tolerance(x, ch10.grid_stride_chain(3001, 2, 64))
    large = ch10.sum_tolerance(x, ch10.grid_stride_chain(3001, 40, 64))
    assert large > small
    case = ch10.reduce_tree.cases()[0]
    assert ch10.reduce_tree.case_tolerance(case) == pytest.approx(
        gamma(1 + 6 + case.blocks) * ch10.magnitude(case.inputs["x"]), rel=1e-6)


# ---- the cases and inputs -----------------------------------------------------------------------

def test_cases_are_awkward_and_offset():
    """Sizes not multiples of any block, a case shorter than one block, one element; values all
    between 4 and 6 times a random scale; 10.3 loops (far fewer threads than elements)."""
    for problem in (ch10.reduce_tree, ch10.reduce_sum):
        fixed = problem.cases() + problem.cases(hidden=True)[:len(problem.cpu_sizes.hidden)]
        cases = problem.cases() + problem.cases(hidden=True)
        sizes = [c.size for c in cases]
        assert 1 in sizes and any(1 < s < c.threads for s, c in zip(sizes, cases))
        for case in fixed:
            assert case.size == 1 or case.size % case.threads
        for case in cases:
            x = case.inputs["x"]
            assert x.dtype == np.float32 and x.size == case.size
            assert x.min() > 0 and x.max() / x.min() <= 1.5 * (1 + 1e-6)   # 4..6 × a scale
    for case in ch10.reduce_sum.cases()[:1] + ch10.reduce_sum.cases(hidden=True)[:1]:
        # 2 to 4 blocks in CPU mode; on a GPU a few per SM, still far fewer threads than elements
        assert 2 <= case.blocks and (case.blocks <= 4 or not CPU)
        assert case.blocks * case.threads * 4 < case.size
    first = ch10.reduce_tree.cases()[0]
    assert first.blocks == -(-first.size // (2 * first.threads))


def test_spec_sample_and_baselines_agree():
    """Do the spec, the speed test's sampled spec and every CPU baseline give the same sum?"""
    x = ch10.make_values_fast(100_003, 2)
    exact = float(np.sum(x, dtype=np.float64))
    case = ag.problem.Case(size=x.size, inputs={"x": x})
    assert ch10.reduce_sum.expected(case)["out"][0] == pytest.approx(exact, rel=1e-12)
    got, tol = ch10.reduce_sum.sampled({"x": x}, np.array([0]))
    assert got["out"][0] == pytest.approx(exact, rel=1e-12) and 0 < tol["out"][0] < 1e-3 * exact
    for key, baseline in ch10.BASELINES.items():
        out = np.full(1, np.nan, np.float32)
        baseline.run(x=x, out=out)
        assert abs(float(out[0]) - exact) <= 1e-5 * exact, key
    assert ch10.reduce_sum.bytes_moved(1 << 28) == (1 << 30) + 4
    fast = ch10.make_values_fast(10_000, 3)
    assert fast.dtype == np.float32 and fast.min() >= 4 * fast.mean() / 5 * 0.97


def test_diagnoses():
    """Does the hint name the bug behind each typical wrong sum?"""
    x = ch10.make_values(3001, 4).astype(np.float64)
    total = x.sum()
    tol = 1e-3
    cases = {
        "not a number": (float("nan"), False),
        "nothing reached out[0]": (0.0, False),
        "counted 4 times": (4 * total, False),
        "the last element": (total - x[-1], False),
        "exactly the first 512 elements": (x[:512].sum(), False),
        "only the first half of each block's segment": (
            sum(x[b * 256:b * 256 + 128].sum() for b in range(24)), True),
        "one block's sum": (x[256:512].sum(), True),
        "a partial warp": (x[:2976].sum(), False),
        "short by": (total - 100, False),
        "too large": (total + 100, False),
    }
    for fragment, (got, segment) in cases.items():
        blocks, threads = (24, 128) if segment else (4, 128)
        hint = ch10.diagnose_sum(x, got, blocks, threads, tol, segment)
        assert fragment in hint, (fragment, hint)
    sums32 = np.add.reduceat(x[:1000], np.arange(0, 1000, 32))
    assert "assumes 32" in ch10.diagnose_warp_sums(x[:1000], sums32[:16], 64)


def test_tree_profile_counts_divergence_and_conflicts():
    """CPU mode: the recorded profile shows what the chapter says: 55 warp-steps, 8 warps
    diverging, 2 passes per access for the interleaved tree; 16-way conflicts for the packed one;
    12 warp-steps and one pass per access for the convergent one."""
    if not CPU:
        pytest.skip("the profile records the simulator's accesses")
    rows = {kind: ch10.tree_profile(ch10.segment_kernel(kind), 256, warp=32)
            for kind in ("divergent", "strided", "convergent")}
    steps = {k: r[1:] for k, r in rows.items()}
    assert sum(r["warps"] for r in steps["divergent"]) == 55
    assert max(r["divergent"] for r in steps["divergent"]) == 8
    assert max(r["worst"] for r in steps["strided"]) == 16
    assert sum(r["passes"] for r in steps["strided"]) == sum(r["passes"] for r in steps["divergent"])
    assert sum(r["warps"] for r in steps["convergent"]) == 12
    assert all(r["worst"] == 1 for r in rows["convergent"])
    assert len(steps["convergent"]) == 8 and len(steps["divergent"]) == 9
    assert "of them divergent" in ch10.profile_table(rows["convergent"], 8)


# ---- 10.4 reduce_time_bound -----------------------------------------------------------------

def bound_ok(n, blocks, threads, resident_blocks, bandwidth, step_time, atomic_rate):
    return max(4 * n / bandwidth,
               math.ceil(blocks / resident_blocks) * math.log2(threads) * step_time,
               blocks / atomic_rate)


def bound_ok_integer_waves(n, blocks, threads, resident_blocks, bandwidth, step_time,
                           atomic_rate):
    waves = -(-blocks // resident_blocks)
    steps = threads.bit_length() - 1
    return max(n * 4.0 / bandwidth, waves * steps * step_time, blocks / atomic_rate)


def bound_no_ceil(n, blocks, threads, resident_blocks, bandwidth, step_time, atomic_rate):
    return max(4 * n / bandwidth, blocks / resident_blocks * math.log2(threads) * step_time,
               blocks / atomic_rate)


def bound_sum(n, blocks, threads, resident_blocks, bandwidth, step_time, atomic_rate):
    return (4 * n / bandwidth + math.ceil(blocks / resident_blocks) * math.log2(threads)
            * step_time + blocks / atomic_rate)


def bound_bytes_not_elements(n, blocks, threads, resident_blocks, bandwidth, step_time,
                             atomic_rate):
    return max(n / bandwidth, math.ceil(blocks / resident_blocks) * math.log2(threads) * step_time,
               blocks / atomic_rate)


def bound_steps_of_the_segment(n, blocks, threads, resident_blocks, bandwidth, step_time,
                               atomic_rate):
    return max(4 * n / bandwidth,
               math.ceil(blocks / resident_blocks) * math.log2(2 * threads) * step_time,
               blocks / atomic_rate)


BOUNDS = {
    "bound_ok": (bound_ok, None),
    "bound_ok_integer_waves": (bound_ok_integer_waves, None),
    "bound_no_ceil": (bound_no_ceil, "elements are wrong"),
    "bound_sum": (bound_sum, "the largest of three times"),
    "bound_bytes_not_elements": (bound_bytes_not_elements, "`seconds`[1]"),
    "bound_steps_of_the_segment": (bound_steps_of_the_segment, "elements are wrong"),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bound_verdict(name):
    """Is each answer to the bound exercise judged as it should be?"""
    fn, expected = BOUNDS[name]
    failure = _verdict(ch10.reduce_time_bound, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        assert expected in failure, failure


def test_bound_worked_numbers():
    """The chapter's numbers: segments of 512 bound by the atomics (1.05 ms), coarsened and
    grid-stride launches by reading (0.224 ms), a 300 GB/s memory by reading; every ceiling binds
    somewhere in the hidden cases."""
    case = ch10.reduce_time_bound.cases()[0]
    exp = ch10.reduce_time_bound.expected(case)["seconds"]
    n = 1 << 28
    assert exp[0] == pytest.approx((n // 512) / 5e8) and exp[0] * 1e3 == pytest.approx(1.049, 1e-3)
    assert exp[1] == pytest.approx(4 * n / 4.8e12) and exp[2] == exp[1]
    assert exp[3] == pytest.approx(4 * n / 3e11)
    tree = math.ceil((n // 512) / 1056) * 8 * 40e-9
    assert tree * 1e3 == pytest.approx(0.159, abs=1e-3)
    hidden = ch10.reduce_time_bound.cases(hidden=True)[0]
    i = hidden.inputs
    terms = np.stack([4 * i["n"] / i["bandwidth"],
                      np.ceil(i["blocks"] / i["resident_blocks"]) * np.log2(i["threads"])
                      * i["step_time"], i["blocks"] / i["atomic_rate"]])
    np.testing.assert_allclose(ch10.reduce_time_bound.expected(hidden)["seconds"],
                               terms.max(axis=0))
    assert set(np.argmax(terms, axis=0).tolist()) == {0, 1, 2}


# ---- on a GPU -----------------------------------------------------------------------------------

@pytest.mark.gpu
def test_measure_runs_the_progression_and_checks_it():
    """On a GPU: does the chapter's measuring helper time the book's kernels and the reference
    (and CuPy, where installed), with right sums?"""
    n = (1 << 22) + 3
    kernels = {"divergent": (ch10.book_kernel("divergent"), lambda n: (1, 256)),
               "coarsened": (ch10.book_kernel("coarsened"), lambda n: (1, 256)),
               "reference": (ch10.reference_sum(), ch10.speed_shape)}
    rows = ch10.measure(kernels, n=n, repeats=3)
    assert all(r["right"] for r in rows), rows
    assert all(r["gbps"] > 0 for r in rows)


@pytest.mark.gpu
def test_gpu_hidden_check_says_what_it_did_not_check(capsys):
    """On a GPU: the hidden check of 10.2 passes a portable kernel and says that warp size 64 was
    not checked."""
    ch10.warp_sums.check_hidden(_warp())
    out = capsys.readouterr().out
    assert "NOT checked" in out


@pytest.mark.slow
@pytest.mark.skipif(not CPU, reason="simulates a GPU judge by patching it; CPU mode only")
@pytest.mark.parametrize("entry,passes", [("ok_xor_butterfly", True),
                                          ("wrong_hard_coded_32", False)])
def test_judge_on_a_gpu_runs_the_other_warp_size_in_cpu_mode(monkeypatch, entry, passes):
    """On a GPU (one warp size) the judge runs warp_sums' hidden cases at the other warp size in
    a second, CPU-mode student process: a kernel hard-coding 32 that passes every case at 32
    loses the points there, a portable one keeps them. The GPU is simulated: the judge is told
    it has one, and the main student's hidden cases are cut to warp size 32."""
    import bank
    from autograder import judge

    problem = ch10.warp_sums
    monkeypatch.setattr(judge, "on_gpu", lambda: True)
    monkeypatch.setattr(type(problem), "warp_sizes", lambda self, hidden: (32,))
    code = next(e.code for e in bank.entries() if e.id == f"warp_sums/{entry}")
    cells = [{"source": bank.SETUP}, {"source": code}]
    call = judge.CheckCall("ch10.warp_sums", "check_hidden", "warp_sums_kernel")
    result = judge.judge_exercise(cells, [call], judge.Settings(secret="t", sandbox="off"))
    assert result.details.get("other_warp_sizes") == [64], result.details
    text = result.error or result.text()
    assert result.passed is passes, text
    if passes:
        assert "again at warp size 64 in CPU mode" in text
    else:
        assert "warp size 64" in text and "in CPU mode by the grader" in text


# ---- aag bench's sums with more bytes in flight -------------------------------------------------

@pytest.mark.parametrize("pairs,per_sm,pipelined", [(8, 0, False), (4, 0, True), (8, 0, True),
                                                    (4, 6, False), (4, 6, True)])
def test_sums_with_more_in_flight_are_right_after_full_passes(pairs, per_sm, pipelined):
    """The bench's sums with more bytes in flight (``in_flight``: 8 pairs per thread and pass,
    passes pipelined, or 6 blocks per SM on a grid of their own) pass the exercise's check at
    sizes where a thread makes 2, 3 and 5 full passes (even and odd counts end the pipelined
    loop in its two places), then its tail loop, with an odd last element: the visible cases
    are too small for one pass of 8 pairs per thread."""
    from autograder.core.spec import Case
    problem = ch10.reduce_sum
    rng = np.random.default_rng(10 * pairs + per_sm + pipelined)
    threads = 4 * 256 if per_sm else 2 * 64   # a grid of its own: 4 blocks of 256 in CPU mode
    cases = []
    for passes in (2, 3, 5):
        n = 2 * threads * pairs * passes + 2 * (threads // 3) + 1
        case = Case(size=n, inputs=problem.make_inputs(rng, n))
        case.threads, case.blocks = 64, 2
        cases.append(case)
    verdict = problem.verdict(ch10.in_flight(pairs, per_sm, pipelined), cases)
    assert verdict.passed, str(verdict)


def test_the_pipelined_sums_keep_a_pass_of_loads_in_flight_across_their_loop():
    """What the pipelined rows are for, read from their SASS for sm_90 (compiled without a GPU):
    the loop's loads of one pass are still in flight when it branches back, where the plain
    loop of 8 pairs per pass uses every load it issued before branching."""
    from autograder.visual import code
    found = code.find_toolkit()
    if not (found.get("nvvm") and found.get("nvrtc") and found.get("nvdisasm")):
        pytest.skip("the CUDA toolkit wheels are not installed (AAG_EXTRAS=cuda13 ./aag test)")
    sig = "float32[::1], float32[::1]"
    kernels = {(4, True): ch10.in_flight(4, pipelined=True),
               (8, True): ch10.in_flight(8, pipelined=True), (8, False): ch10.in_flight(8)}
    views = code.compile_kernels([(k, (), sig) for k in kernels.values()], cc=(9, 0))
    for (pairs, pipelined), view in zip(kernels, views):
        assert view.sass, view.notes
        loop = code.loads_in_flight(view.sass)
        assert loop.loads == (2 if pipelined else 1) * pairs, loop
        assert loop.across_back_edge == (pairs if pipelined else 0), loop
