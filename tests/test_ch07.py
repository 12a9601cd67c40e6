"""Chapter 7: do the convolution checks pass correct kernels written several ways (an argument
filter, a constant-memory factory, PMPP's tiled factory, the course reference) and fail each
classic bug (a flipped filter, half a ghost-cell test, a hard-coded radius or halo, a missing
barrier, ghost cells left unzeroed, a hard-coded tile) with a verdict that says what went wrong?
Are the tolerance, the speed samples and the traffic bounds right?

``ALLCLOSE_HARNESS`` at the end holds the typical hand-written tests ("naive allclose") for the
chapter's bank entries, in the form of ``tests/bank/naive.py``'s harnesses."""

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag
from autograder.checks import U32, CheckFailed, gamma
from autograder.problem import Case

from verdicts import verdict_text as _verdict

ch07 = ag.problems.ch07
CPU = not ag.backend.is_gpu




def _expect(problem, fn, fragments, hidden=False):
    """fn must fail the check; in CPU mode the verdict must contain every fragment."""
    failure = _verdict(problem, fn, hidden=hidden)
    assert failure is not None, "passed but is wrong"
    if CPU:
        for fragment in fragments:
            assert fragment in failure, (fragment, failure)


def _case(problem, size, threads, seed=0):
    """A case of ``problem`` at ``size`` launched with blocks of ``threads``."""
    case = Case(size=size, inputs=problem.make_inputs(np.random.default_rng(seed), size),
                threads=threads, label=problem.size_label(size))
    case.blocks = problem.blocks_for(size, threads)
    return case


# ---- 7.1 basic ----------------------------------------------------------------------------------

@cuda.jit
def basic_ok(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                i, j = row + a - r, col + b - r
                if 0 <= i < h and 0 <= j < w:
                    acc += F[a, b] * image[i, j]
        out[row, col] = acc


@cuda.jit
def basic_ok_clamped_float64(image, F, out, r):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    h, w = image.shape
    if row >= h or col >= w:
        return
    acc = 0.0
    for i in range(max(row - r, 0), min(row + r + 1, h)):
        for j in range(max(col - r, 0), min(col + r + 1, w)):
            acc += F[i - row + r, j - col + r] * image[i, j]
    out[row, col] = acc


@cuda.jit
def basic_flipped(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                i, j = row + a - r, col + b - r
                if 0 <= i < h and 0 <= j < w:
                    acc += F[2 * r - a, 2 * r - b] * image[i, j]
        out[row, col] = acc


@cuda.jit
def basic_half_ghost_test(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                i, j = row + a - r, col + b - r
                if i < h and j < w:
                    acc += F[a, b] * image[i, j]
        out[row, col] = acc


@cuda.jit
def basic_no_ghost_test(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                acc += F[a, b] * image[row + a - r, col + b - r]
        out[row, col] = acc


@cuda.jit
def basic_radius_one(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(3):
            for b in range(3):
                i, j = row + a - 1, col + b - 1
                if 0 <= i < h and 0 <= j < w:
                    acc += F[a, b] * image[i, j]
        out[row, col] = acc


@cuda.jit
def basic_swapped_xy(image, F, out, r):
    row, col = cuda.grid(2)                 # x taken as the row
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                i, j = row + a - r, col + b - r
                if 0 <= i < h and 0 <= j < w:
                    acc += F[a, b] * image[i, j]
        out[row, col] = acc


@cuda.jit
def basic_float16(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = np.float16(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                i, j = row + a - r, col + b - r
                if 0 <= i < h and 0 <= j < w:
                    acc += np.float16(F[a, b]) * np.float16(image[i, j])
        out[row, col] = np.float32(acc)


EDGE_HINT = "Check both ends of the ghost-cell test"
BASIC = {
    "basic_ok": (basic_ok, None),
    "basic_ok_clamped_float64": (basic_ok_clamped_float64, None),
    "basic_flipped": (basic_flipped, ("elements are wrong", "the filter is not flipped")),
    "basic_half_ghost_test": (basic_half_ghost_test, ("23 × 37 image", EDGE_HINT)),
    "basic_no_ghost_test": (basic_no_ghost_test, ("out of bounds",)),
    "basic_radius_one": (basic_radius_one, ("5 × 5 filter (r = 2)", "elements are wrong")),
    "basic_swapped_xy": (basic_swapped_xy, ("never written",)),
    "basic_float16": (basic_float16, ("elements are wrong",)),
}


@pytest.mark.parametrize("name", sorted(BASIC))
def test_basic_verdict(name):
    """Is each basic kernel judged as it should be (pass, or fail for the right reason)?"""
    fn, expected = BASIC[name]
    if not CPU and expected and "out of bounds" in expected:
        # An illegal address ends the process's CUDA context, failing every later GPU test here
        # (the judge restarts its student process; a test process cannot be).
        pytest.skip("an out-of-bounds access ends a GPU process's CUDA context: CPU mode checks "
                    "every index and names the bug")
    if expected is None:
        failure = _verdict(ch07.conv2d_basic, fn)
        assert failure is None, failure
    else:
        _expect(ch07.conv2d_basic, fn, expected)


def test_half_ghost_test_is_wrong_only_at_the_near_edges():
    """The bug the notebook breaks on purpose: wrong exactly in the first r rows and columns."""
    case = _case(ch07.conv2d_basic, (23, 37), (16, 8), seed=3)
    r = case.inputs["radius"]
    outcome = ch07.conv2d_basic.run(basic_half_ghost_test, case)
    exp = ch07.conv2d_basic.expected(case)["out"]
    tol = ch07.conv2d_basic.tolerance(case.inputs, {"out": exp})["out"]
    bad = ~(np.abs(outcome.outputs["out"] - exp) <= tol)
    rows, cols = np.nonzero(bad)
    assert bad.any() and np.all((rows < r) | (cols < r))


# ---- 7.2 constant ---------------------------------------------------------------------------------

def make_constant_ok(F):
    r = F.shape[0] // 2

    @cuda.jit
    def kernel(image, out):
        Fc = cuda.const.array_like(F)
        col, row = cuda.grid(2)
        h, w = image.shape
        if row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    i, j = row + a - r, col + b - r
                    if 0 <= i < h and 0 <= j < w:
                        acc += Fc[a, b] * image[i, j]
            out[row, col] = acc
    return kernel


def make_constant_radius_one(F):
    @cuda.jit
    def kernel(image, out):
        Fc = cuda.const.array_like(F)
        col, row = cuda.grid(2)
        h, w = image.shape
        if row < h and col < w:
            acc = float32(0)
            for a in range(3):
                for b in range(3):
                    i, j = row + a - 1, col + b - 1
                    if 0 <= i < h and 0 <= j < w:
                        acc += Fc[a, b] * image[i, j]
            out[row, col] = acc
    return kernel


def make_constant_swapped_axes(F):
    r = F.shape[0] // 2

    @cuda.jit
    def kernel(image, out):
        Fc = cuda.const.array_like(F)
        col, row = cuda.grid(2)
        h, w = image.shape
        if row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    i, j = row + a - r, col + b - r
                    if 0 <= i < h and 0 <= j < w:
                        acc += Fc[b, a] * image[i, j]
            out[row, col] = acc
    return kernel


def make_constant_returns_basic(F):
    return basic_ok          # 7.1's kernel: wants (image, F, out, r)


CONSTANT = {
    "make_constant_ok": (make_constant_ok, None),
    "make_constant_radius_one": (make_constant_radius_one, ("5 × 5 filter (r = 2)", "its radius is")),
    "make_constant_swapped_axes": (make_constant_swapped_axes,
                                   ("elements are wrong", "every case has its own filter")),
    "make_constant_returns_basic": (make_constant_returns_basic, ("your code raised",)),
}


@pytest.mark.parametrize("name", sorted(CONSTANT))
def test_constant_verdict(name):
    """Is each constant-memory factory judged as it should be?"""
    fn, expected = CONSTANT[name]
    if expected is None:
        failure = _verdict(ch07.conv2d_constant, fn)
        assert failure is None, failure
    else:
        _expect(ch07.conv2d_constant, fn, expected)


def test_factory_is_called_once_per_filter():
    """The launch makes one kernel per (factory, filter) and reuses it: a speed test's timed calls
    must not compile, and a factory must not be able to tell the cases apart by call count."""
    calls = []

    def counting(F):
        calls.append(F.copy())
        return make_constant_ok(F)

    case = _case(ch07.conv2d_constant, (4, 3), (16, 8))
    outs = {"out": np.full((4, 3), np.nan, np.float32)}
    for _ in range(3):
        ch07.conv2d_constant.launch(counting, dict(case.inputs), outs, case)
    assert len(calls) == 1
    np.testing.assert_array_equal(calls[0], ch07.conv_filter(case.inputs["filter_seed"],
                                                             case.inputs["radius"]))
    assert calls[0].dtype == np.float32 and calls[0].flags.c_contiguous


# ---- 7.3 tiled --------------------------------------------------------------------------------------

def make_tiled_ok(F, in_tile):
    r = F.shape[0] // 2
    out_tile = in_tile - 2 * r

    @cuda.jit
    def kernel(image, out):
        Fc = cuda.const.array_like(F)
        tile = cuda.shared.array((in_tile, in_tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * out_tile + ty - r
        col = cuda.blockIdx.x * out_tile + tx - r
        h, w = image.shape
        if 0 <= row < h and 0 <= col < w:
            tile[ty, tx] = image[row, col]
        else:
            tile[ty, tx] = float32(0)
        cuda.syncthreads()
        if r <= ty < r + out_tile and r <= tx < r + out_tile and row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    acc += Fc[a, b] * tile[ty - r + a, tx - r + b]
            out[row, col] = acc
    return kernel


def _tiled_variant(barrier=True, zero_ghosts=True, halo=None, shift=True, tile_side=None,
                   stride_in_tile=False):
    """The tiled factory with one thing changed (each keyword names a classic bug)."""
    def make(F, in_tile):
        r = F.shape[0] // 2
        side = tile_side or in_tile
        h_ = r if halo is None else halo               # the halo the kernel believes in
        out_tile = side - 2 * r
        step = side if stride_in_tile else out_tile
        offset = h_ if shift else 0

        @cuda.jit
        def kernel(image, out):
            Fc = cuda.const.array_like(F)
            tile = cuda.shared.array((side, side), float32)
            tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
            row = cuda.blockIdx.y * step + ty - offset
            col = cuda.blockIdx.x * step + tx - offset
            h, w = image.shape
            if tx < side and ty < side:
                if 0 <= row < h and 0 <= col < w:
                    tile[ty, tx] = image[row, col]
                elif zero_ghosts:
                    tile[ty, tx] = float32(0)
            if barrier:
                cuda.syncthreads()
            if (h_ <= ty < h_ + out_tile and h_ <= tx < h_ + out_tile and 0 <= row < h
                    and 0 <= col < w):
                acc = float32(0)
                for a in range(2 * r + 1):
                    for b in range(2 * r + 1):
                        ii, jj = ty - r + a, tx - r + b
                        if 0 <= ii < side and 0 <= jj < side:
                            acc += Fc[a, b] * tile[ii, jj]
                out[row, col] = acc
        return kernel
    return make


RACE = "shared-memory race on `tile`"
TILE_HINT = "the input tile starts r rows and r columns before the output tile"
TILED = {
    "make_tiled_ok": (make_tiled_ok, None),
    "reference": (ch07.reference_conv2d_tiled(), None),
    "variant_as_written_ok": (_tiled_variant(), None),
    "no_barrier": (_tiled_variant(barrier=False), (RACE, "no cuda.syncthreads() between them",
                                                    "before any thread reads")),
    "ghosts_not_zeroed": (_tiled_variant(zero_ghosts=False), ("elements are wrong", TILE_HINT)),
    "halo_of_one": (_tiled_variant(halo=1), ("5 × 5 filter (r = 2)", "is a halo of 1 hard-coded")),
    "not_shifted": (_tiled_variant(shift=False), ("never written",)),
    "stride_in_tile": (_tiled_variant(stride_in_tile=True), ("never written",)),
}


@pytest.mark.parametrize("name", sorted(TILED))
def test_tiled_verdict(name):
    """Is each tiled factory judged as it should be? (The reference passes through the same
    check, launched with its own shape.)"""
    fn, expected = TILED[name]
    if expected is None:
        failure = _verdict(ch07.conv2d_tiled, fn)
        assert failure is None, failure
    else:
        _expect(ch07.conv2d_tiled, fn, expected)


def test_hard_coded_tile_fails_with_other_tiles():
    """A factory that ignores in_tile (a 16 × 16 tile of its own) passes the visible cases, which
    use 16 × 16, and fails a 32 × 32 launch."""
    fn = _tiled_variant(tile_side=16)
    assert _verdict(ch07.conv2d_tiled, fn, hidden=False) is None
    case = _case(ch07.conv2d_tiled, (23, 37), (32, 32))
    verdict = ch07.conv2d_tiled.verdict(fn, [case])
    assert not verdict.passed
    if CPU:
        assert "32 × 32 threads" in str(verdict) and "never written" in str(verdict), str(verdict)


@pytest.mark.skipif(not CPU, reason="the race detector is CPU mode's; on a GPU the race may not show")
def test_missing_barrier_fails_every_time():
    """Does the tiled kernel without its barrier fail on every run, naming both lines?"""
    fn = _tiled_variant(barrier=False)
    for _ in range(3):
        with pytest.raises(CheckFailed) as info:
            ch07.conv2d_tiled.check(fn)
        text = str(info.value)
        assert RACE in text and "tile[ty, tx] = " in text, text     # a load or a ghost's 0
        assert "acc += Fc[a, b] * tile[ii, jj]" in text, text


def test_tiled_cases_cover_the_image_with_room_for_the_halo():
    """Every case's tile is larger than 2r, the grid covers the image with out_tile tiles, the
    visible ones use 16 × 16 and the hidden ones draw from 16 × 16 and 32 × 32."""
    p = ch07.conv2d_tiled
    visible, hidden = p.cases(), p.cases(hidden=True)
    assert {c.threads for c in visible} == {(16, 16)}
    assert {c.threads for c in hidden} <= {(16, 16), (32, 32)}
    for case in visible + hidden:
        h, w = case.size
        r = ch07.conv_radius(case.size)
        assert case.inputs["radius"] == r and 1 <= r <= 3
        out_tile = case.threads[0] - 2 * r
        assert out_tile >= 1
        bx, by = case.blocks
        assert bx * out_tile >= w > (bx - 1) * out_tile
        assert by * out_tile >= h > (by - 1) * out_tile
    if CPU:                                    # a GPU's visible cases add a large image
        assert [ch07.conv_radius(c.size) for c in visible] == [1, 2, 2]
    size = p.gpu_sizes.speed
    blocks, threads = p.speed_shape(size)
    assert threads == ch07.SPEED_TILE == (32, 32) and blocks == p.blocks_for(size, threads)


def test_reference_launch_covers_the_image():
    for h, w in ((1, 1), (64, 32), (65, 33), (8191, 8193)):
        (bx, by), (tx, ty) = ch07.reference_shape(h, w)
        assert bx * tx * ch07.REF_COLS >= w and by * ty * ch07.REF_ROWS >= h
        assert (bx - 1) * tx * ch07.REF_COLS < w and (by - 1) * ty * ch07.REF_ROWS < h


# ---- the spec, the inputs, the tolerance, the speed samples ---------------------------------------

@pytest.mark.parametrize("h,w,r", [(40, 70, 2), (41, 71, 2), (37, 133, 2), (19, 24, 2),
                                   (9, 11, 2), (40, 70, 1), (50, 69, 3)])
def test_pair_loads_give_the_reference_builds_answer_bit_for_bit(h, w, r):
    """The 8-byte bench row reads each row's window as pairs of floats (even and odd widths: an
    odd width alternates the rows' parity) and stores pairs where a row starts even: the same
    sums in the same order as the reference's build, so the same bits; odd r falls back to it."""
    from autograder.problems.ch07 import references as R
    F = ag.problems.ch07.conv_filter(7, r)
    img = np.random.default_rng(h * w).standard_normal((h, w)).astype(np.float32)
    from autograder.problems.kit.kernels import pairs_fit
    got = {}
    for name, factory in (("pairs", R.conv_pairs_8x2()), ("reference", R.reference_conv2d_tiled())):
        blocks, threads = R.own_launch_shape(factory, h, w)
        d_img = cuda.to_device(img)
        d_out = cuda.to_device(np.full((h, w), np.nan, np.float32))
        # fresh arrays start 8-byte aligned: the pair kernels run, not the fallback
        assert pairs_fit(d_img.reshape(h * w)[:2], d_out.reshape(h * w)[:2])
        factory(F)[blocks, threads](d_img, d_out)
        got[name] = d_out.copy_to_host()
    assert not np.isnan(got["pairs"]).any()
    np.testing.assert_array_equal(got["pairs"], got["reference"])


def test_spec_matches_a_direct_sum():
    rng = np.random.default_rng(1)
    image = rng.standard_normal((7, 5))
    F = rng.standard_normal((5, 5))
    out = ch07.convolve2d(image, F)
    for i in range(7):
        for j in range(5):
            total = sum(F[a, b] * image[i + a - 2, j + b - 2] for a in range(5) for b in range(5)
                        if 0 <= i + a - 2 < 7 and 0 <= j + b - 2 < 5)
            assert out[i, j] == pytest.approx(total, rel=1e-12, abs=1e-12)


def test_filters_are_asymmetric_and_reproducible():
    """A flipped or transposed filter must give other values: the check's filters are neither
    symmetric nor antisymmetric, and the same seed gives the same filter."""
    for seed in range(20):
        for r in (1, 2, 3):
            F = ch07.conv_filter(seed, r)
            assert F.shape == (2 * r + 1, 2 * r + 1) and F.dtype == np.float32
            assert not np.allclose(F, F[::-1, ::-1]) and not np.allclose(F, F.T)
            np.testing.assert_array_equal(F, ch07.conv_filter(seed, r))
    scales = [np.abs(ch07.conv_filter(s, 1)).max() for s in range(50)]
    assert max(scales) / min(scales) > 100


def test_inputs_have_structure_and_spread():
    case = ch07.conv2d_basic.cases()[0]
    image = case.inputs["image"]
    assert image.dtype == np.float32 and image.shape == tuple(case.size)
    assert np.unique(image).size > 200                     # noise and gradients, not a constant
    assert np.abs(np.diff(image, axis=1)).max() > 5 * np.median(np.abs(np.diff(image, axis=1)))


def test_tolerance_is_gamma_n_of_the_absolute_sum():
    case = next(c for c in ch07.conv2d_basic.cases() if c.inputs["F"].shape == (5, 5))
    F = case.inputs["F"].astype(np.float64)
    image = case.inputs["image"].astype(np.float64)
    tol = ch07.conv2d_basic.tolerance(case.inputs, ch07.conv2d_basic.expected(case))["out"]
    n = F.size
    assert n == 25
    np.testing.assert_allclose(tol, gamma(n) * ch07.convolve2d(np.abs(image), np.abs(F))
                               + ag.checks.TINY32, rtol=1e-12)
    # Tight: a single rounding of the largest term more than the bound allows is caught.
    assert np.all(tol < 32 * U32 * ch07.convolve2d(np.abs(image), np.abs(F)) + 1e-30)


def test_sample_spec_equals_the_full_spec():
    """The speed test's samples (expected value and tolerance at flat indices) agree with the
    full float64 spec, edges included."""
    p = ch07.conv2d_tiled
    inputs = p.speed_inputs(np.random.default_rng(2), (37, 23))
    exp_full = p.expected(Case(size=(37, 23), inputs=inputs))["out"]
    tol_full = p.tolerance(inputs, {"out": exp_full})["out"]
    idx = np.random.default_rng(3).choice(37 * 23, 200, replace=False)
    idx = np.concatenate([idx, [0, 22, 37 * 23 - 1]])
    exp, tol = p.sampled(inputs, idx)
    np.testing.assert_allclose(exp["out"], exp_full.reshape(-1)[idx], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tol["out"], tol_full.reshape(-1)[idx], rtol=1e-12)


def test_speed_inputs_share_the_filter_and_differ_in_the_image():
    """Scalars travel once per speed run, so every content set must have the same filter; the
    images differ (a kernel that caches its output between calls is caught)."""
    p = ch07.conv2d_tiled
    size = (64, 96)
    a = p.speed_inputs(np.random.default_rng([5, 0]), size)
    b = p.speed_inputs(np.random.default_rng([5, 1]), size)
    assert a["filter_seed"] == b["filter_seed"] and a["radius"] == b["radius"] == ch07.conv_radius(size)
    assert a["image"].dtype == np.float32 and a["image"].shape == size
    assert not np.array_equal(a["image"], b["image"])
    assert ch07.conv_radius(p.gpu_sizes.speed) == 2


def test_baselines_compute_the_spec():
    """The CPU baselines timed against the speed test compute the convolution."""
    p = ch07.conv2d_tiled
    inputs = p.speed_inputs(np.random.default_rng(4), (33, 47))
    exp = p.expected(Case(size=(33, 47), inputs=inputs))["out"]
    tol = p.tolerance(inputs, {"out": exp})["out"]
    for key, baseline in p.baselines.items():
        out = np.full((33, 47), np.nan, np.float32)
        baseline.run(**inputs, out=out)
        assert np.all(np.abs(out - exp) <= tol), key


# ---- 7.4 conv_time_bounds ----------------------------------------------------------------------------

def bounds_ok(height, width, r, in_tile, peak_flops, bandwidth):
    taps = (2 * r + 1) ** 2
    pixels = height * width
    out_tile = in_tile - 2 * r
    compute = 2 * taps * pixels / peak_flops
    per_pixel = (4 * (2 * taps + 1), 4 * (taps + 1), 4 * (in_tile ** 2 / out_tile ** 2 + 1), 8)
    return tuple(max(compute, q * pixels / bandwidth) for q in per_pixel)


def bounds_ok_list(height, width, r, in_tile, peak_flops, bandwidth):
    flops = 2 * (2 * r + 1) ** 2 * height * width
    nbytes = ch07.conv_bytes(height, width, r, in_tile)
    return [flops / min(peak_flops, flops / q * bandwidth) for q in nbytes]


def _bounds_variant(change):
    def fn(height, width, r, in_tile, peak_flops, bandwidth):
        taps = (2 * r + 1) ** 2
        pixels = height * width
        out_tile = in_tile - 2 * r
        compute = 2 * taps * pixels / peak_flops
        per_pixel = [4 * (2 * taps + 1), 4 * (taps + 1), 4 * (in_tile ** 2 / out_tile ** 2 + 1), 8]
        if change == "sum":
            return tuple(compute + q * pixels / bandwidth for q in per_pixel)
        if change == "constant_counts_filter":
            per_pixel[1] = per_pixel[0]
        if change == "tile_no_halo":
            per_pixel[2] = 8
        if change == "tile_linear":
            per_pixel[2] = 4 * (in_tile / out_tile + 1)
        if change == "no_store":
            per_pixel = [q - 4 for q in per_pixel]
        if change == "rounded":
            return tuple(float(f"{max(compute, q * pixels / bandwidth):.4g}") for q in per_pixel)
        if change == "three":
            return tuple(max(compute, q * pixels / bandwidth) for q in per_pixel[:3])
        return tuple(max(compute, q * pixels / bandwidth) for q in per_pixel)
    return fn


BOUNDS = {
    "bounds_ok": (bounds_ok, None),
    "bounds_ok_list": (bounds_ok_list, None),
    "sum": (_bounds_variant("sum"), "the larger of two times"),
    "constant_counts_filter": (_bounds_variant("constant_counts_filter"), "`constant`[0]"),
    "tile_no_halo": (_bounds_variant("tile_no_halo"), "`tiled`[0]"),
    "tile_linear": (_bounds_variant("tile_linear"), "`tiled`[0]"),
    "no_store": (_bounds_variant("no_store"), "`basic`[0]"),
    "rounded": (_bounds_variant("rounded"), "elements are wrong"),
    "three": (_bounds_variant("three"), "not enough values to unpack"),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bounds_verdict(name):
    """Is each answer to the prediction exercise judged as it should be?"""
    fn, expected = BOUNDS[name]
    failure = _verdict(ch07.conv_time_bounds, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        assert expected in failure, failure


def test_bounds_worked_numbers():
    """The notebook's worked example: 8191 × 8193, r = 2, 32 × 32 tiles on 67 TFLOP/s and
    4.8 TB/s. Every kernel is memory bound; the model promises tiling about 22× over the basic
    kernel; r = 7 makes the ideal kernel compute bound."""
    basic, constant, tiled, ideal = bounds_ok(8191, 8193, 2, 32, 67e12, 4.8e12)
    assert basic == pytest.approx(2.852e-3, rel=1e-3)
    assert constant == pytest.approx(1.454e-3, rel=1e-3)
    assert tiled == pytest.approx(1.290e-4, rel=1e-3)
    assert ideal == pytest.approx(1.118e-4, rel=1e-3)
    assert basic / tiled == pytest.approx(22.1, rel=1e-2)
    case = ch07.conv_time_bounds.cases()[0]
    exp = ch07.conv_time_bounds.expected(case)
    assert exp["basic"][0] == pytest.approx(basic) and exp["ideal"][0] == pytest.approx(ideal)
    flops_r7 = 2 * 15 ** 2 * 8191 * 8193
    assert exp["ideal"][2] == pytest.approx(flops_r7 / 67e12)      # compute bound
    inputs = case.inputs
    assert np.all(inputs["in_tile"] > 2 * inputs["radius"])
    hidden = ch07.conv_time_bounds.cases(hidden=True)[0].inputs
    assert np.all(hidden["in_tile"] > 2 * hidden["radius"])


# ---- on a GPU only ------------------------------------------------------------------------------------

FROZEN_F = np.zeros((3, 3), np.float32)     # the global filter of the GPU test below


@cuda.jit
def _global_kernel(image, out):
    Fc = cuda.const.array_like(FROZEN_F)
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(3):
            for b in range(3):
                i, j = row + a - 1, col + b - 1
                if 0 <= i < h and 0 <= j < w:
                    acc += Fc[a, b] * image[i, j]
        out[row, col] = acc


@pytest.mark.gpu
def test_a_global_filter_is_frozen_on_a_gpu():
    """On a GPU, a kernel that reads a global filter keeps the values it was compiled with."""
    global FROZEN_F
    d_image = cuda.to_device(np.ones((4, 4), np.float32))
    d_out = cuda.device_array((4, 4), np.float32)
    FROZEN_F = np.full((3, 3), 1 / 9, np.float32)
    _global_kernel[(1, 1), (4, 4)](d_image, d_out)
    first = d_out.copy_to_host()[1, 1]
    FROZEN_F = np.zeros((3, 3), np.float32)
    _global_kernel[(1, 1), (4, 4)](d_image, d_out)
    assert d_out.copy_to_host()[1, 1] == pytest.approx(first) == pytest.approx(1.0, rel=1e-6)


# ---- the bank's naive allclose harnesses (tests/bank/ch07_convolution/naive.py) -------------------------------

from bank.ch07_convolution.naive import (_allclose_conv2d_basic, _allclose_conv2d_constant,  # noqa: E402
                             _allclose_conv2d_tiled, _allclose_conv_time_bounds)


def test_allclose_harnesses_pass_correct_code_and_fail_a_bug():
    """The naive harnesses are sound: correct code passes, an obvious bug fails."""
    assert _allclose_conv2d_basic(basic_ok) and not _allclose_conv2d_basic(basic_flipped)
    assert _allclose_conv2d_constant(make_constant_ok)
    assert not _allclose_conv2d_constant(make_constant_swapped_axes)
    assert _allclose_conv2d_tiled(make_tiled_ok)
    assert not _allclose_conv2d_tiled(_tiled_variant(shift=False))
    assert _allclose_conv_time_bounds(bounds_ok)
    assert not _allclose_conv_time_bounds(_bounds_variant("sum"))


def test_the_chapter_quotes_the_h200_run_it_draws():
    """The text beside the recorded chart quotes that chart's times (basic, constant-memory, tiled,
    reference, copy) and never says a kernel the chart shows was not timed."""
    import re
    from pathlib import Path
    recorded = ag.experiments.recorded("h200_ch07_conv2d")
    ms = {row["label"]: row["ms"] for row in recorded["rows"] + recorded["reference"]}
    text = (Path(__file__).resolve().parents[1] / "source/ch07_convolution/ch07_convolution.py"
            ).read_text()
    text = re.sub(r"\s+", " ", re.sub(r"(?m)^# ?", "", text))
    assert "not timed" not in text
    quoted = {"basic (7.1)": r"the basic kernel ([\d.]+) ms",
              "constant (7.2)": r"the constant-memory kernel ([\d.]+) ms",
              "tiled (7.3), 32 × 32": r"the tiled kernel \(32 × 32 tiles\) ([\d.]+) ms",
              "course reference": r"the course reference ([\d.]+) ms",
              recorded["reference"][0]["label"]: r"a copy of the same bytes ([\d.]+) ms"}
    for label, pattern in quoted.items():
        found = re.findall(pattern, text)
        assert found, f"the text does not quote {label}"
        for number in found:
            decimals = len(number.split(".")[1])
            assert abs(float(number) - ms[label]) <= 0.5 * 10 ** -decimals, (label, number)
