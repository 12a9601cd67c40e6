"""Chapter 3: do the checks pass every correct 2-D kernel and fail every wrong one, with a verdict
that says what went wrong? Also: is the test image really structured, and are the tolerances
tight enough that float16 arithmetic fails while correct float32 passes?"""

import numpy as np
import pytest
from numba import cuda

import autograder as ag
from autograder.checks import U32, CheckFailed

from verdicts import verdict_text as _verdict

ch03 = ag.problems.ch03


# ---- rgb_to_gray -----------------------------------------------------------------------------------

@cuda.jit
def gray_ok(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


@cuda.jit
def gray_ok_explicit_float32(image, gray):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row >= image.shape[0] or col >= image.shape[1]:
        return
    r, g, b = image[row, col, 0], image[row, col, 1], image[row, col, 2]
    gray[row, col] = np.float32(0.299) * r + np.float32(0.587) * g + np.float32(0.114) * b


@cuda.jit
def gray_swapped_xy(image, gray):
    row, col = cuda.grid(2)            # x is the column: this takes it as the row
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


@cuda.jit
def gray_no_guard(image, gray):
    col, row = cuda.grid(2)
    gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                      + 0.114 * image[row, col, 2])


@cuda.jit
def gray_blockdim_x_twice(image, gray):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.y   # assumes square blocks
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])


@cuda.jit
def gray_rb_swapped(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.114 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.299 * image[row, col, 2])


@cuda.jit
def gray_float16(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        r = np.float16(image[row, col, 0])
        g = np.float16(image[row, col, 1])
        b = np.float16(image[row, col, 2])
        gray[row, col] = np.float32(np.float16(0.299) * r + np.float16(0.587) * g
                                    + np.float16(0.114) * b)


# ---- blur ----------------------------------------------------------------------------------------

@cuda.jit
def blur_ok(image, out, radius):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        total = np.float32(0)
        count = 0
        for r in range(row - radius, row + radius + 1):
            for c in range(col - radius, col + radius + 1):
                if 0 <= r < h and 0 <= c < w:
                    total += image[r, c]
                    count += 1
        out[row, col] = total / count


@cuda.jit
def blur_ok_clamped_ranges(image, out, radius):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        r0, r1 = max(row - radius, 0), min(row + radius + 1, h)
        c0, c1 = max(col - radius, 0), min(col + radius + 1, w)
        total = 0.0
        for r in range(r0, r1):
            for c in range(c0, c1):
                total += image[r, c]
        out[row, col] = total / ((r1 - r0) * (c1 - c0))


@cuda.jit
def blur_full_window_count(image, out, radius):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        total = np.float32(0)
        for r in range(row - radius, row + radius + 1):
            for c in range(col - radius, col + radius + 1):
                if 0 <= r < h and 0 <= c < w:
                    total += image[r, c]
        out[row, col] = total / ((2 * radius + 1) * (2 * radius + 1))   # wrong at the edges


@cuda.jit
def blur_swapped_xy(image, out, radius):
    row, col = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        total = np.float32(0)
        count = 0
        for r in range(row - radius, row + radius + 1):
            for c in range(col - radius, col + radius + 1):
                if 0 <= r < h and 0 <= c < w:
                    total += image[r, c]
                    count += 1
        out[row, col] = total / count


@cuda.jit
def blur_radius_one(image, out, radius):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        total = np.float32(0)
        count = 0
        for r in range(row - 1, row + 2):              # ignores `radius`
            for c in range(col - 1, col + 2):
                if 0 <= r < h and 0 <= c < w:
                    total += image[r, c]
                    count += 1
        out[row, col] = total / count


@cuda.jit
def blur_float16(image, out, radius):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        total = np.float16(0)
        count = 0
        for r in range(row - radius, row + radius + 1):
            for c in range(col - radius, col + radius + 1):
                if 0 <= r < h and 0 <= c < w:
                    total += np.float16(image[r, c])
                    count += 1
        out[row, col] = np.float32(total) / count


# ---- matmul_naive ----------------------------------------------------------------------------------

@cuda.jit
def matmul_ok(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_ok_float64_accumulator(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        acc = 0.0
        for k in range(B.shape[0]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_inner_over_n(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float32(0)
        for k in range(C.shape[1]):                    # N, not K
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_swapped_xy(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_no_guard(A, B, C):
    col, row = cuda.grid(2)
    acc = np.float32(0)
    for k in range(A.shape[1]):
        acc += A[row, k] * B[k, col]
    C[row, col] = acc


@cuda.jit
def matmul_float16(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.float16(0)
        for k in range(A.shape[1]):
            acc += np.float16(A[row, k]) * np.float16(B[k, col])
        C[row, col] = np.float32(acc)


CASES = {
    # name: (problem, kernel, None if correct else a fragment the CPU-mode verdict must contain)
    "gray_ok": (ch03.rgb_to_gray, gray_ok, None),
    "gray_ok_explicit_float32": (ch03.rgb_to_gray, gray_ok_explicit_float32, None),
    "gray_swapped_xy": (ch03.rgb_to_gray, gray_swapped_xy, "column comes from x"),
    "gray_no_guard": (ch03.rgb_to_gray, gray_no_guard, "Guard both coordinates"),
    "gray_blockdim_x_twice": (ch03.rgb_to_gray, gray_blockdim_x_twice, "were never written"),
    "gray_rb_swapped": (ch03.rgb_to_gray, gray_rb_swapped, "elements are wrong"),
    "gray_float16": (ch03.rgb_to_gray, gray_float16, "float16"),
    "blur_ok": (ch03.blur, blur_ok, None),
    "blur_ok_clamped_ranges": (ch03.blur, blur_ok_clamped_ranges, None),
    "blur_full_window_count": (ch03.blur, blur_full_window_count, "`out`[0, 0]"),
    "blur_swapped_xy": (ch03.blur, blur_swapped_xy, "column comes from x"),
    "blur_radius_one": (ch03.blur, blur_radius_one, "radius 2"),
    "blur_float16": (ch03.blur, blur_float16, "float16"),
    "matmul_ok": (ch03.matmul_naive, matmul_ok, None),
    "matmul_ok_float64_accumulator": (ch03.matmul_naive, matmul_ok_float64_accumulator, None),
    "matmul_inner_over_n": (ch03.matmul_naive, matmul_inner_over_n, "A 19 × 37 times B 37 × 27"),
    "matmul_swapped_xy": (ch03.matmul_naive, matmul_swapped_xy, "column comes from x"),
    "matmul_no_guard": (ch03.matmul_naive, matmul_no_guard, "Guard both coordinates"),
    "matmul_float16": (ch03.matmul_naive, matmul_float16, "float16"),
}




@pytest.mark.parametrize("name", sorted(CASES))
def test_submission_verdict(name):
    """Is each chapter-3 submission judged as it should be (pass, or fail for the right reason)?"""
    problem, fn, expected = CASES[name]
    failure = _verdict(problem, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        if not ag.backend.is_gpu:
            assert expected in failure, failure


def test_verdict_names_shape_launch_and_element():
    """Does a wrong-value verdict name the image shape, the 2-D launch and the pixel (row, col)?"""
    with pytest.raises(CheckFailed) as info:
        ch03.rgb_to_gray.check(gray_rb_swapped)
    text = str(info.value)
    assert "a 29 × 45 image (rows × columns)" in text
    assert "grid of blocks of 16 × 8 threads" in text
    assert "`gray`[" in text and "expected" in text and "got" in text


def test_every_case_is_non_square_or_tiny_and_off_the_block_sizes():
    """Are the first (largest visible) cases non-square with sides off every block size, so that
    swapped x and y and a missing bounds check cannot pass?"""
    for p in (p for p in ch03.PROBLEMS if p.on_device):
        first = p.cases()[0]
        rows, cols = first.size[0], first.size[-1]
        assert rows != cols, p.name
        assert all(s % 4 for s in (rows, cols)), (p.name, first.size)
        hidden = p.cases(hidden=True)
        assert len({c.size for c in hidden}) == len(hidden)
        assert any(c.threads != ch03.VISIBLE_BLOCK for c in hidden) or len(hidden) < 3


def test_hidden_shapes_depend_on_secret(monkeypatch):
    """Do hidden shapes and values change with the instructor's secret, visible ones not?"""
    p = ch03.blur
    monkeypatch.setenv("AAG_SECRET_SEED", "one")
    a = p.cases(hidden=True)
    monkeypatch.setenv("AAG_SECRET_SEED", "two")
    b = p.cases(hidden=True)
    assert [c.size for c in a] != [c.size for c in b]
    assert np.array_equal(p.cases()[0].inputs["image"], p.cases()[0].inputs["image"])


def test_test_image_has_structure():
    """Is the test image more than a smooth ramp: sharp edges, all channels used, seeded?"""
    img = ch03.test_image(48, 64, 3)
    assert img.shape == (48, 64, 3) and img.dtype == np.float32
    assert 0.0 <= img.min() and img.max() <= 1.0
    assert np.array_equal(img, ch03.test_image(48, 64, 3))
    assert not np.array_equal(img, ch03.test_image(48, 64, 4))
    jumps = np.abs(np.diff(img, axis=1)).max(axis=-1)
    assert (jumps > 0.3).sum() > 20                           # edges, not just a gradient
    assert all(img[..., k].std() > 0.1 for k in range(3))
    # Its blur differs from it noticeably (the blur check has something to see) ...
    gray = ch03.to_gray(img)
    assert np.abs(ch03.box_blur(gray, 1) - gray).mean() > 0.01
    # ... and the transposed image's blur differs from the blur's transpose nowhere: a sanity
    # check of the spec (a box blur commutes with transposition).
    assert np.allclose(ch03.box_blur(gray.T, 2), ch03.box_blur(gray, 2).T)


def test_blur_spec_averages_only_in_bounds_pixels():
    """Is the blur spec's corner the mean of the (r+1)² in-bounds pixels?"""
    x = np.arange(20.0).reshape(4, 5)
    assert ch03.box_blur(x, 1)[0, 0] == pytest.approx(x[:2, :2].mean())
    assert ch03.box_blur(x, 1)[2, 2] == pytest.approx(x[1:4, 1:4].mean())
    assert np.allclose(ch03.box_blur(x, 9), x.mean())


@pytest.mark.parametrize("problem", [p for p in ch03.PROBLEMS if p.on_device], ids=lambda p: p.name)
def test_tolerance_is_tight(problem):
    """Is every tolerance far below float16's precision and near float32's (a few ulps)?"""
    case = problem.cases()[0]
    expected = problem.expected(case)
    tol = problem.tolerance(case.inputs, expected)
    for name, exp in expected.items():
        rel = np.median(tol[name] / np.maximum(np.abs(exp), 1e-30))
        assert U32 / 2 < rel < 2.0 ** -14, (name, rel)


@pytest.mark.parametrize("name", ["numpy", "serial"])
@pytest.mark.parametrize("problem", [p for p in ch03.PROBLEMS if p.on_device], ids=lambda p: p.name)
def test_cpu_baselines_meet_the_spec(problem, name):
    """Does each CPU baseline compute what the spec says, within the exercise's tolerance?"""
    case = problem.cases()[0]
    outs = {k: np.full(shape, np.nan, dtype) for k, (shape, dtype) in problem.outputs(case.size).items()}
    problem.baselines[name].run(**case.inputs, **outs)
    expected = problem.expected(case)
    tol = problem.tolerance(case.inputs, expected)
    for k, exp in expected.items():
        # BLAS and a summed-area table sum in another order: allow a few times the bound.
        assert np.all(np.abs(outs[k] - exp) <= 4 * tol[k]), (problem.name, name, k)


# ---- image_time_bound ---------------------------------------------------------------------------

def test_the_image_bound_accepts_equal_formulas_and_rejects_the_classic_slips():
    p = ch03.image_time_bound

    def exact(h, w, b_in, b_out, bw):
        return h * w * (b_in + b_out) / bw

    def per_pixel_first(h, w, b_in, b_out, bw):
        return (b_in + b_out) / bw * h * w

    def reads_only(h, w, b_in, b_out, bw):
        return h * w * b_in / bw

    def rounded(h, w, b_in, b_out, bw):
        return float(f"{exact(h, w, b_in, b_out, bw):.4g}")

    for ok in (exact, per_pixel_first):
        assert p.verdict(ok, p.cases()).passed
        assert p.verdict(ok, p.cases(hidden=True)).passed
    for wrong in (reads_only, rounded):
        assert not p.verdict(wrong, p.cases(hidden=True)).passed


# ---- speed-test samples -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rgb_to_gray", "blur", "matmul_naive"])
def test_the_speed_samples_agree_with_the_whole_spec(name):
    """The judge checks 4096 output elements of every timed call with the problem's sample_spec:
    its values and tolerances must be the full spec's at those elements."""
    from autograder import judge
    from autograder.problem import Case
    p = getattr(ch03, name)
    size = (37, 53) if name != "matmul_naive" else (19, 37, 27)
    rng = np.random.default_rng(7)
    inputs = p.speed_inputs(rng, size)
    full = p.expected(Case(size=size, inputs=inputs))
    tol = p.tolerance(inputs, full)
    (key, exp_full), = full.items()
    idx = judge._sample_indices(rng, exp_full.size)
    body = idx[idx < exp_full.size]
    expected, tolerance = p.sampled(inputs, body)
    np.testing.assert_allclose(expected[key], exp_full.reshape(-1)[body], rtol=1e-15)
    np.testing.assert_allclose(tolerance[key], np.broadcast_to(tol[key], exp_full.shape).reshape(-1)[body],
                               rtol=1e-12)
    right = np.concatenate([exp_full.reshape(-1)[body].astype(np.float32), np.full(64, np.nan, np.float32)])
    assert judge._check_sample(p, inputs, exp_full.size, idx, {key: right}) == ""
    wrong = right.copy()
    wrong[1] += 8 * tolerance[key][1] + 1e-3 * abs(wrong[1])
    assert "1 of" in judge._check_sample(p, inputs, exp_full.size, idx, {key: wrong})
