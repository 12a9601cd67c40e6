"""Chapter 4: do the checks pass the two-kinds kernels written several ways and fail the classic
bugs (swapped branches, a missing bounds check, the wrong coefficient order, results stored at the
sorted position, float16) with a verdict that says what went wrong? Are the occupancy and peak
exercises judged exactly, and does the occupancy spec follow CUDA's calculator (on a GPU: the
driver's own answer)?"""

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag

from verdicts import verdict_text as _verdict

ch04 = ag.problems.ch04
CPU = not ag.backend.is_gpu




def _judged(problem, cases, name):
    fn, expected = cases[name]
    if not CPU and expected and "out of bounds" in expected and "uni_" in name:
        pytest.skip("an unguarded scatter through garbage indices may crash the GPU context")
    failure = _verdict(problem, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        if CPU or not any("out of bounds" in f for f in expected):
            for fragment in expected:
                assert fragment in failure, (fragment, failure)


# ---- divergent -------------------------------------------------------------------------------------

@cuda.jit
def div_ok(x, kind, a, b, out):
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        if kind[i] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xi
        out[i] = acc


@cuda.jit(device=True)
def _power(a, x):
    acc = 0.0
    for c in a:
        acc = acc * x + c
    return acc


@cuda.jit(device=True)
def _product(b, x):
    acc = 1
    for k in range(b.shape[0]):
        acc = acc * (1 + b[k] * x)
    return acc


@cuda.jit
def div_ok_device_functions_float64(x, kind, a, b, out):
    # Device functions, float64 accumulators (0.0 and the int 1), an early return.
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= out.shape[0]:
        return
    out[i] = _product(b, x[i]) if kind[i] else _power(a, x[i])


@cuda.jit
def div_swapped(x, kind, a, b, out):
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        if kind[i] == 1:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xi
        out[i] = acc


@cuda.jit
def div_no_guard(x, kind, a, b, out):
    i = cuda.grid(1)
    xi = x[i]
    acc = float32(0)
    if kind[i] == 0:
        for k in range(a.size):
            acc = acc * xi + a[k]
    else:
        acc = float32(1)
        for k in range(b.size):
            acc *= float32(1) + b[k] * xi
    out[i] = acc


@cuda.jit
def div_reversed_coefficients(x, kind, a, b, out):
    # a[0] taken as the constant term (lowest power first): the polynomial reversed.
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        if kind[i] == 0:
            acc = float32(0)
            for k in range(a.size - 1, -1, -1):
                acc = acc * xi + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xi
        out[i] = acc


@cuda.jit
def div_one_minus(x, kind, a, b, out):
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        if kind[i] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xi + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) - b[k] * xi
        out[i] = acc


@cuda.jit
def div_float16(x, kind, a, b, out):
    i = cuda.grid(1)
    if i < x.size:
        xi = np.float16(x[i])
        if kind[i] == 0:
            acc = np.float16(0)
            for k in range(a.size):
                acc = acc * xi + np.float16(a[k])
        else:
            acc = np.float16(1)
            for k in range(b.size):
                acc *= np.float16(1) + np.float16(b[k]) * xi
        out[i] = np.float32(acc)


VALUE = "elements are wrong"
DIVERGENT = {
    "div_ok": (div_ok, None),
    "div_ok_device_functions_float64": (div_ok_device_functions_float64, None),
    "div_swapped": (div_swapped, (VALUE, "on its own kind's branch", "inputs there: x[")),
    "div_no_guard": (div_no_guard, ("out of bounds", "guard the body")),
    "div_reversed_coefficients": (div_reversed_coefficients, (VALUE, "acc = acc·x + a[k]")),
    "div_one_minus": (div_one_minus, (VALUE, "kind[")),
    "div_float16": (div_float16, ("float16",)),
}


@pytest.mark.parametrize("name", sorted(DIVERGENT))
def test_divergent_verdict(name):
    """Is each one-thread-per-element kernel judged as it should be?"""
    _judged(ch04.divergent, DIVERGENT, name)


# ---- uniform ---------------------------------------------------------------------------------------

@cuda.jit
def uni_ok(x_sorted, kind_sorted, order, a, b, out):
    t = cuda.grid(1)
    if t < x_sorted.size:
        xt = x_sorted[t]
        if kind_sorted[t] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xt + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xt
        out[order[t]] = acc


@cuda.jit
def uni_ok_grid_stride_device_functions(x_sorted, kind_sorted, order, a, b, out):
    for t in range(cuda.grid(1), x_sorted.size, cuda.gridsize(1)):
        if kind_sorted[t] != 0:
            out[order[t]] = _product(b, x_sorted[t])
        else:
            out[order[t]] = _power(a, x_sorted[t])


@cuda.jit
def uni_stores_at_t(x_sorted, kind_sorted, order, a, b, out):
    # The divergent kernel's store, on grouped data: results land at the sorted positions.
    t = cuda.grid(1)
    if t < x_sorted.size:
        xt = x_sorted[t]
        if kind_sorted[t] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xt + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xt
        out[t] = acc


@cuda.jit
def uni_gathers_inputs(x_sorted, kind_sorted, order, a, b, out):
    # Reads through order as well as writing through it: the wrong element's value and kind.
    t = cuda.grid(1)
    if t < x_sorted.size:
        i = order[t]
        xt = x_sorted[i]
        if kind_sorted[i] == 0:
            acc = float32(0)
            for k in range(a.size):
                acc = acc * xt + a[k]
        else:
            acc = float32(1)
            for k in range(b.size):
                acc *= float32(1) + b[k] * xt
        out[i] = acc


@cuda.jit
def uni_no_guard(x_sorted, kind_sorted, order, a, b, out):
    t = cuda.grid(1)
    xt = x_sorted[t]
    acc = float32(0)
    if kind_sorted[t] == 0:
        for k in range(a.size):
            acc = acc * xt + a[k]
    else:
        acc = float32(1)
        for k in range(b.size):
            acc *= float32(1) + b[k] * xt
    out[order[t]] = acc


UNIFORM = {
    "uni_ok": (uni_ok, None),
    "uni_ok_grid_stride_device_functions": (uni_ok_grid_stride_device_functions, None),
    "uni_stores_at_t": (uni_stores_at_t, (VALUE, "out[order[t]]", "is sorted element t =")),
    "uni_gathers_inputs": (uni_gathers_inputs, (VALUE, "no indirection when reading")),
    "uni_no_guard": (uni_no_guard, ("out of bounds", "guard the body")),
}


@pytest.mark.parametrize("name", sorted(UNIFORM))
def test_uniform_verdict(name):
    """Is each grouped kernel judged as it should be?"""
    _judged(ch04.uniform, UNIFORM, name)


def test_divergent_kernel_fails_as_the_uniform_one():
    """The mixed-order kernel handed in for the grouped exercise (order ignored) must fail: the
    data arrive grouped, so its results land at the sorted positions."""
    def adapted(x_sorted, kind_sorted, order, a, b, out):
        return div_ok[adapted.blocks, adapted.threads](x_sorted, kind_sorted, a, b, out)

    class Launcher:
        def __getitem__(self, config):
            adapted.blocks, adapted.threads = config
            return adapted

    failure = _verdict(ch04.uniform, Launcher())
    assert failure is not None and VALUE in failure, failure


# ---- inputs, sizes, tolerances ---------------------------------------------------------------------

def test_cases_mix_kinds_and_are_not_multiples_of_the_block():
    """Do the visible cases mix both kinds (so a swapped branch fails at once), and are no sizes
    above 1 a multiple of a warp or of the block?"""
    for problem in (ch04.divergent, ch04.uniform):
        cases = problem.cases() + problem.cases(hidden=True)
        first = cases[0]
        kinds = first.inputs.get("kind", first.inputs.get("kind_sorted"))
        assert 0.05 < kinds.mean() < 0.95
        fixed = problem.sizes.visible + problem.sizes.hidden
        assert all(size == 1 or size % 32 for size in fixed), fixed
        for case in cases:
            assert case.blocks * case.threads >= case.size > (case.blocks - 1) * case.threads


def test_uniform_inputs_are_grouped_by_kind():
    """Is `order` a permutation that lists kind 0 first, each group in increasing order, with
    x_sorted and kind_sorted in that order? Speed inputs too (D = E = SPEED_DEGREE)."""
    rng = np.random.default_rng(0)
    for inputs in (ch04.uniform.make_inputs(rng, 1000), ch04.uniform.speed_inputs(rng, 5000)):
        order, ks = inputs["order"], inputs["kind_sorted"]
        assert order.dtype == np.int32 and np.array_equal(np.sort(order), np.arange(order.size))
        assert np.all(np.diff(ks.astype(int)) >= 0)
        n0 = int((ks == 0).sum())
        assert np.all(np.diff(order[:n0]) > 0) and np.all(np.diff(order[n0:]) > 0)
    speed = ch04.uniform.speed_inputs(rng, 5000)
    assert speed["a"].size == speed["b"].size == ch04.SPEED_DEGREE
    assert 0.4 < speed["kind_sorted"].mean() < 0.6
    blocks, threads = ch04.uniform.speed_shape(1 << 24)
    assert blocks * threads >= 1 << 24 and threads == 256


def test_uniform_sampled_spec_matches_the_whole_spec():
    """Does the speed test's sampled spec (expected and tolerance at some output indices) agree
    with the full spec at those indices?"""
    rng = np.random.default_rng(1)
    inputs = ch04.uniform.make_inputs(rng, 1500)
    case = ag.problem.Case(size=1500, inputs=inputs)
    expected = ch04.uniform.expected(case)["out"]
    tol = ch04.uniform.tolerance(inputs, {"out": expected})["out"]
    idx = rng.choice(1500, 200, replace=False)
    exp_s, tol_s = ch04.uniform.sampled(inputs, idx)
    np.testing.assert_array_equal(exp_s["out"], expected[idx])
    np.testing.assert_array_equal(tol_s["out"], tol[idx])


def test_float32_arithmetic_passes_and_float16_does_not():
    """Is the tolerance wide enough for any float32 evaluation (NumPy's, in float32) on many
    random cases, and narrow enough that float16 arithmetic fails?"""
    rng = np.random.default_rng(2)
    for _ in range(30):
        inputs = ch04.divergent.make_inputs(rng, 500)
        x, kind, a, b = (inputs[k] for k in ("x", "kind", "a", "b"))
        exact = ch04.two_kinds(x, kind, a, b)
        tol = ch04.two_kinds_tolerance(x, kind, a, b)
        out = np.empty(x.size, np.float32)
        ch04.specs._numpy_divergent(x, kind, a, b, out)
        assert np.all(np.abs(out - exact) <= tol)
    inputs = ch04.divergent.make_inputs(np.random.default_rng(3), 2000)
    x, kind, a, b = (inputs[k].astype(np.float16) if inputs[k].dtype == np.float32 else inputs[k]
                     for k in ("x", "kind", "a", "b"))
    half = ch04.two_kinds(x, kind, a, b).astype(np.float16)
    exact = ch04.two_kinds(inputs["x"], kind, inputs["a"], inputs["b"])
    tol = ch04.two_kinds_tolerance(inputs["x"], kind, inputs["a"], inputs["b"])
    assert np.any(np.abs(half - exact) > tol)


def test_uniform_baselines_compute_the_spec():
    """Do the CPU baselines of the speed test compute the same thing (on grouped inputs)?"""
    inputs = ch04.uniform.make_inputs(np.random.default_rng(4), 3000)
    case = ag.problem.Case(size=3000, inputs=inputs)
    expected = ch04.uniform.expected(case)["out"]
    tol = ch04.uniform.tolerance(inputs, {"out": expected})["out"]
    for key, baseline in ch04.uniform.baselines.items():
        out = np.full(3000, np.nan, np.float32)
        baseline.run(**inputs, out=out)
        assert np.all(np.abs(out - expected) <= tol), key


# ---- peak_figures ----------------------------------------------------------------------------------

def peak_ok(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return 2 * sm_count * fp32_lanes_per_sm * clock_khz * 1000, memory_clock_khz * bus_width_bits / 4 * 1000


def peak_ok_ghz(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    ghz, mem_ghz = clock_khz / 1e6, memory_clock_khz / 1e6
    return [sm_count * fp32_lanes_per_sm * 2 * ghz * 1e9, (bus_width_bits / 8) * 2 * mem_ghz * 1e9]


def peak_no_fma(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return sm_count * fp32_lanes_per_sm * clock_khz * 1e3, 2 * memory_clock_khz * 1e3 * bus_width_bits / 8


def peak_no_ddr(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return 2 * sm_count * fp32_lanes_per_sm * clock_khz * 1e3, memory_clock_khz * 1e3 * bus_width_bits / 8


def peak_bits(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return 2 * sm_count * fp32_lanes_per_sm * clock_khz * 1e3, 2 * memory_clock_khz * 1e3 * bus_width_bits


def peak_khz(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return 2 * sm_count * fp32_lanes_per_sm * clock_khz, 2 * memory_clock_khz * bus_width_bits / 8


def peak_one_number(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return 2 * sm_count * fp32_lanes_per_sm * clock_khz * 1e3


def peak_rounded(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    f, b = peak_ok(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits)
    return float(f"{f:.3g}"), float(f"{b:.3g}")


PEAKS = {
    "peak_ok": (peak_ok, None),
    "peak_ok_ghz": (peak_ok_ghz, None),
    "peak_no_fma": (peak_no_fma, ("`flops`[0]", "fused multiply-add")),
    "peak_no_ddr": (peak_no_ddr, ("`bytes_per_second`[0]", "double data rate")),
    "peak_bits": (peak_bits, ("`bytes_per_second`[0]", "bits / 8")),
    "peak_khz": (peak_khz, ("`flops`[0]", "kHz × 1000")),
    "peak_one_number": (peak_one_number, ("must return two numbers", "flops, bytes_per_second")),
    "peak_rounded": (peak_rounded, (VALUE,)),
}


@pytest.mark.parametrize("name", sorted(PEAKS))
def test_peak_verdict(name):
    """Is each answer to the peak-figures exercise judged as it should be?"""
    _judged(ch04.peak_figures, PEAKS, name)


def test_peak_examples_are_the_published_figures():
    """H200-like: 66.9 TFLOP/s, 4.8 TB/s; A100: 19.5 TFLOP/s, 1.56 TB/s; RTX 4090: 82.6 TFLOP/s,
    1.01 TB/s."""
    got = [ch04.peak_spec(*example) for example in ch04.PEAK_EXAMPLES]
    for (flops, bandwidth), (f, b) in zip(got, ((66.9e12, 4.8e12), (19.5e12, 1.555e12),
                                                  (82.6e12, 1.008e12))):
        assert flops == pytest.approx(f, rel=2e-3) and bandwidth == pytest.approx(b, rel=2e-3)


# ---- occupancy -------------------------------------------------------------------------------------

def occ_ok(threads_per_block, regs_per_thread, smem_per_block, limits):
    warp = limits["warp_size"]
    w = -(-threads_per_block // warp)
    max_warps = limits["max_threads_per_sm"] // warp
    unit = limits["reg_alloc_unit"]
    per_warp = -(-regs_per_thread * warp // unit) * unit
    parts = limits["sub_partitions"]
    by_regs = (limits["regs_per_sm"] // parts // per_warp) * parts // w
    unit = limits["smem_alloc_unit"]
    smem = -(-(smem_per_block + limits["smem_reserved_per_block"]) // unit) * unit
    by_smem = limits["smem_per_sm"] // smem if smem else 10 ** 9
    blocks = min(max_warps // w, limits["max_blocks_per_sm"], by_regs, by_smem)
    return blocks, blocks * w / max_warps


def occ_ok_one_block_at_a_time(threads_per_block, regs_per_thread, smem_per_block, limits):
    # Place blocks on an empty SM one by one, each warp in the emptiest sub-partition, until
    # something runs out.
    import math
    warp = limits["warp_size"]
    w = math.ceil(threads_per_block / warp)
    per_warp = math.ceil(regs_per_thread * warp / limits["reg_alloc_unit"]) * limits["reg_alloc_unit"]
    smem = math.ceil((smem_per_block + limits["smem_reserved_per_block"]) / limits["smem_alloc_unit"]) \
        * limits["smem_alloc_unit"]
    free_regs = [limits["regs_per_sm"] // limits["sub_partitions"]] * limits["sub_partitions"]
    free_smem, warps, blocks = limits["smem_per_sm"], 0, 0
    while True:
        regs = list(free_regs)
        fits = (blocks < limits["max_blocks_per_sm"] and free_smem >= smem
                and warps + w <= limits["max_threads_per_sm"] // warp)
        for _ in range(w if fits else 0):
            best = max(range(len(regs)), key=lambda j: regs[j])
            if regs[best] < per_warp:
                fits = False
                break
            regs[best] -= per_warp
        if not fits:
            break
        free_regs, free_smem, warps, blocks = regs, free_smem - smem, warps + w, blocks + 1
    return float(blocks), warps / (limits["max_threads_per_sm"] // warp)


def occ_no_sub_partitions(threads_per_block, regs_per_thread, smem_per_block, limits):
    lim = dict(limits, sub_partitions=1)
    return occ_ok(threads_per_block, regs_per_thread, smem_per_block, lim)


def occ_no_reserve(threads_per_block, regs_per_thread, smem_per_block, limits):
    return occ_ok(threads_per_block, regs_per_thread, smem_per_block,
                  dict(limits, smem_reserved_per_block=0))


def occ_no_register_rounding(threads_per_block, regs_per_thread, smem_per_block, limits):
    return occ_ok(threads_per_block, regs_per_thread, smem_per_block, dict(limits, reg_alloc_unit=1))


def occ_threads_fraction(threads_per_block, regs_per_thread, smem_per_block, limits):
    blocks, _ = occ_ok(threads_per_block, regs_per_thread, smem_per_block, limits)
    return blocks, blocks * threads_per_block / limits["max_threads_per_sm"]


def occ_no_block_slots(threads_per_block, regs_per_thread, smem_per_block, limits):
    return occ_ok(threads_per_block, regs_per_thread, smem_per_block,
                  dict(limits, max_blocks_per_sm=10 ** 6))


def occ_divides_by_zero(threads_per_block, regs_per_thread, smem_per_block, limits):
    unit = limits["smem_alloc_unit"]
    smem = -(-(smem_per_block + limits["smem_reserved_per_block"]) // unit) * unit
    by_smem = limits["smem_per_sm"] // smem          # a block with no shared memory: crash
    blocks, occ = occ_ok(threads_per_block, regs_per_thread, smem_per_block, limits)
    return min(blocks, by_smem), occ


def occ_hard_coded_h200(threads_per_block, regs_per_thread, smem_per_block, limits):
    return occ_ok(threads_per_block, regs_per_thread, smem_per_block, ch04.H200)


def occ_fractional_blocks(threads_per_block, regs_per_thread, smem_per_block, limits):
    # The register limit divided without flooring: blocks that are not whole numbers.
    warp = limits["warp_size"]
    w = -(-threads_per_block // warp)
    max_warps = limits["max_threads_per_sm"] // warp
    unit = limits["reg_alloc_unit"]
    per_warp = -(-regs_per_thread * warp // unit) * unit
    by_regs = limits["regs_per_sm"] / per_warp / w
    unit = limits["smem_alloc_unit"]
    smem = -(-(smem_per_block + limits["smem_reserved_per_block"]) // unit) * unit
    by_smem = limits["smem_per_sm"] // smem if smem else 10 ** 9
    blocks = min(max_warps // w, limits["max_blocks_per_sm"], by_regs, by_smem)
    return blocks, blocks * w / max_warps


OCCUPANCY = {
    "occ_ok": (occ_ok, None),
    "occ_ok_one_block_at_a_time": (occ_ok_one_block_at_a_time, None),
    "occ_no_sub_partitions": (occ_no_sub_partitions, ("`blocks`[2]: expected 24, got 25",)),
    "occ_no_reserve": (occ_no_reserve, ("`blocks`[3]: expected 4, got 5",)),
    "occ_no_register_rounding": (occ_no_register_rounding, ("hidden tests", "`blocks`")),
    "occ_threads_fraction": (occ_threads_fraction, ("`occupancy`[4]: expected 1, got 0.78125",)),
    "occ_no_block_slots": (occ_no_block_slots, ("`blocks`[6]: expected 32, got 64",)),
    "occ_divides_by_zero": (occ_divides_by_zero, ("ZeroDivisionError",)),
    "occ_hard_coded_h200": (occ_hard_coded_h200, ("`occupancy`[7]: expected 0.833333333, got 0.625",)),
    "occ_fractional_blocks": (occ_fractional_blocks, ("`blocks`[2]: expected 24, got 25.6",)),
}


@pytest.mark.parametrize("name", sorted(OCCUPANCY))
def test_occupancy_verdict(name):
    """Is each answer to the occupancy exercise judged as it should be, naming the case?"""
    _judged(ch04.occupancy, OCCUPANCY, name)


def test_occupancy_examples_worked_by_hand():
    """The visible cases, worked by hand (see OCCUPANCY_EXAMPLES' comments)."""
    case = ch04.occupancy.cases()[0]
    exp = ch04.occupancy.expected(case)
    assert exp["blocks"].tolist() == [8, 4, 24, 4, 16, 0, 32, 5, 16]
    assert exp["occupancy"].tolist() == [1.0, 0.5, 0.75, 0.5, 1.0, 0.0, 0.5, 40 / 48, 1.0]
    # The chapter's worked example: 256 threads, 40 registers, 20,000 bytes: 6 blocks, 75%.
    blocks, occ = ch04.resident_blocks(256, 40, 20000, ch04.H200)
    assert (blocks, occ) == (6, 0.75)


def _calculator(T, R, S, lim, regs_per_block=65536, max_threads_per_block=1024):
    """cudaOccMaxActiveBlocksPerMultiprocessor for compute capability >= 7.0, default carveout,
    no partitioned global caching, written out step by step, with its per-block register checks
    (which the exercise leaves out: on every device here they follow from the sub-partition
    rule)."""
    warp = lim["warp_size"]
    if T > max_threads_per_block:
        return 0
    w = -(-T // warp)
    limit_warps = (lim["max_threads_per_sm"] // warp) // w
    limit_blocks = lim["max_blocks_per_sm"]
    per_warp = -(-(R * warp) // lim["reg_alloc_unit"]) * lim["reg_alloc_unit"]
    parts = lim["sub_partitions"]
    assumed = per_warp * (-(-w // parts) * parts)
    if regs_per_block < assumed or regs_per_block < per_warp * w or R > 255:
        limit_regs = 0
    else:
        limit_regs = (lim["regs_per_sm"] // parts // per_warp) * parts // w
    smem = -(-(S + lim["smem_reserved_per_block"]) // lim["smem_alloc_unit"]) * lim["smem_alloc_unit"]
    limit_smem = lim["smem_per_sm"] // smem if smem else 10 ** 9
    return min(limit_regs, limit_smem, limit_warps, limit_blocks)


def test_occupancy_spec_follows_the_calculator_on_real_devices():
    """On every real device in DEVICES, over block sizes, registers and shared memory: does the
    exercise's spec give the calculator's blocks (including its per-block register checks)?"""
    rng = np.random.default_rng(5)
    for name, lim in ch04.DEVICES.items():
        for _ in range(400):
            T = int(rng.integers(1, 1025))
            R = int(rng.integers(1, 256))
            S = int(rng.integers(0, lim["smem_per_sm"] - lim["smem_reserved_per_block"] + 1)) \
                if rng.random() < 0.6 else 0
            blocks, occ = ch04.resident_blocks(T, R, S, lim)
            assert blocks == _calculator(T, R, S, lim), (name, T, R, S)
            assert 0 <= occ <= 1


def test_hidden_occupancy_cases_exercise_every_rule():
    """Do the hidden cases contain cases where each rule alone changes the answer (so each classic
    mistake loses the points), and a mix of limiting factors?"""
    case = ch04.occupancy.cases(hidden=True)[0]
    inputs = case.inputs
    lim = {k: inputs[k] for k in ch04.LIMIT_KEYS}
    args = (inputs["threads_per_block"], inputs["regs_per_thread"], inputs["smem_per_block"])
    blocks, _ = ch04.resident_blocks(*args, lim)
    for change in ({"sub_partitions": 1}, {"smem_reserved_per_block": 0}, {"reg_alloc_unit": 1},
                   {"max_blocks_per_sm": 10 ** 6}):
        other, _ = ch04.resident_blocks(*args, dict(lim, **{k: np.full_like(inputs["warp_size"], v)
                                                             for k, v in change.items()}))
        assert (other != blocks).sum() >= 2, change
    assert 0 < (blocks == 0).mean() < 0.3
    assert len(set(inputs["warp_size"].tolist())) == 2


# ---- the references pass; on a GPU, the driver agrees with the spec --------------------------------

def test_reference_kernels_pass_the_checks():
    """Do the course's reference kernels (speed test, bench) pass the checks?"""
    for problem, kernel in ((ch04.uniform, ch04.reference_uniform()),
                            (ch04.divergent, ch04.reference_divergent())):
        assert _verdict(problem, kernel) is None


@pytest.mark.gpu
def test_driver_occupancy_matches_the_spec():
    """The driver's occupancy calculator (through max_cooperative_grid_blocks) against the spec,
    for compiled kernels with their real register counts, several block sizes and dynamic
    shared-memory paddings, on this GPU."""
    dev = cuda.get_current_device()
    cc = dev.compute_capability
    lim = {"warp_size": dev.WARP_SIZE, "max_threads_per_sm": dev.MAX_THREADS_PER_MULTIPROCESSOR,
           "max_blocks_per_sm": dev.MAX_BLOCKS_PER_MULTIPROCESSOR,
           "regs_per_sm": dev.MAX_REGISTERS_PER_MULTIPROCESSOR, "reg_alloc_unit": 256,
           "sub_partitions": 4, "smem_per_sm": dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
           "smem_alloc_unit": 128 if cc >= (8, 0) else 256,
           "smem_reserved_per_block": dev.RESERVED_SHARED_MEMORY_PER_BLOCK}
    sig = "void(float32[::1], uint8[::1], int32[::1], float32[::1], float32[::1], float32[::1])"
    sms = dev.MULTIPROCESSOR_COUNT
    checked = 0
    for cap in (None, 64, 40, 32, 24):
        options = {} if cap is None else {"max_registers": cap}
        kernel = cuda.jit(sig, **options)(ch04.reference_uniform().py_func)
        regs, static = kernel.get_regs_per_thread(), kernel.get_shared_mem_per_block()
        overload = next(iter(kernel.overloads.values()))
        for T in (32, 64, 96, 100, 128, 256, 384, 512, 1024):
            for pad in (0, 1000, 6272, 20000, 45568):
                driver = overload.max_cooperative_grid_blocks(T, pad) // sms
                blocks, _ = ch04.resident_blocks(T, regs, static + pad, lim)
                assert blocks == driver, (cap, regs, T, pad, blocks, driver)
                checked += 1
    assert checked == 5 * 9 * 5


def test_bench_variant_is_correct_and_diverges():
    """Is the interleaved bench kernel correct, and does it put both kinds in nearly every warp
    of the speed test's inputs (so its time measures divergence)?"""
    assert _verdict(ch04.uniform, ch04.reference_interleaved()) is None
    n = 4097
    t = np.arange(n)
    s = np.where(t % 2 == 0, t // 2, (n + 1) // 2 + t // 2)
    assert np.array_equal(np.sort(s), t)
    kind_sorted = np.sort(ch04.uniform.speed_inputs(np.random.default_rng(6), n)["kind_sorted"])
    warps = kind_sorted[s[: n // 32 * 32]].reshape(-1, 32)
    assert (warps.min(axis=1) != warps.max(axis=1)).mean() > 0.95
