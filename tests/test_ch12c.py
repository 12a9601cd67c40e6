"""The capstone (chapter 12c): does the equalization check pass correct designs written several
ways, and fail every classic bug (an exclusive scan, cdf_min taken as cdf[0], an integer division,
a constant image divided by zero, pixels never written) with a verdict that names it? Does it fail
a host function that computes on the host, however the data reach it (a copy of the image, a
scratch array read back, a NumPy array passed to a kernel)? Are the images what the notebook
promises, and is the tolerance float32's error bound?"""

import numpy as np
import pytest
from numba import cuda

import autograder as ag
from autograder.core.checks import Outcome

from verdicts import assert_judged

cap = ag.problems.ch12c
U = 2.0 ** -24


# ---- the images, the spec, the tolerance ----------------------------------------------------------

def test_cases_hold_the_promised_images():
    """Every kind of image, the edge shapes (1 × 1, one row, one column), sides that are multiples
    of nothing, and each kind as its label says."""
    cases = cap.equalize.cases() + cap.equalize.cases(hidden=True)
    shapes = [tuple(c.size) for c in cases]
    assert {(1, 1), (37, 53), (13, 7), (23, 28), (1, 1000), (1001, 1)} <= set(shapes)
    assert {cap.kind_of(*s) for s in shapes} == set(cap.KINDS)
    for case in cases:
        img = case.inputs["img"]
        assert img.dtype == np.uint8 and img.shape == tuple(case.size)
        kind = cap.kind_of(*img.shape)
        values = np.unique(img)
        assert case.label.startswith(f"a {img.shape[0]} × {img.shape[1]} image")
        if kind == "constant":
            assert values.size == 1
        elif kind == "two":
            assert values.size == 2
        elif kind == "all" and img.size >= 256:
            assert values.size == 256
        elif kind == "clipped":
            assert 0 not in values and 255 not in values and values.size > 2
        elif kind == "narrow":
            assert values.max() - values.min() < 24 and values.size > 2
    first = cases[0].inputs["img"]
    assert first.shape == (37, 53) and first.min() > 0       # cdf[0] is not cdf_min there


def test_spec_is_the_definition():
    """The float64 spec against the definition written out with loops, a constant image, and the
    darkest value present at 0, the brightest at 1."""
    rng = np.random.default_rng(1)
    img = cap.gray_image(rng, 9, 11, "clipped")
    hist = [int((img == v).sum()) for v in range(256)]
    cdf = [sum(hist[:v + 1]) for v in range(256)]
    low = cdf[int(img.min())]
    by_hand = np.array([[(cdf[v] - low) / (img.size - low) for v in row] for row in img])
    assert np.array_equal(cap.equalized(img), by_hand)
    assert cap.equalized(img)[img == img.min()].max() == 0.0
    assert cap.equalized(img)[img == img.max()].min() == 1.0
    assert not cap.equalized(np.full((3, 4), 17, np.uint8)).any()


def test_tolerance_is_float32s_bound():
    """Four units of float32 roundoff relative to the value below 2^24 pixels, exact zeros; a
    float32 computation (integer differences, converted, divided) is inside it, and one that is
    8 units off is not. Above 2^24 pixels the counts' conversion is added."""
    img = cap.gray_image(np.random.default_rng(2), 61, 132, "photo")
    exp = cap.equalized(img)
    tol = cap.tolerance_of_image(img, exp)
    assert np.array_equal(tol, 4 * U * exp) and (tol[exp == 0] == 0).all()
    _, cdf, low, n = cap.counts(img)
    f32 = np.float32(cdf[img] - low) / np.float32(n - low)
    assert (np.abs(f32 - exp) <= tol).all()
    off = (exp * (1 + 8 * U)).astype(np.float64)
    assert (np.abs(off - exp) > tol)[exp > 0.5].all()
    big = np.zeros((4097, 8191), np.uint8)
    big[:, 4000:] = 200
    exp_big = cap.equalized(big)
    assert (cap.tolerance_of_image(big, exp_big) > 4 * U * exp_big)[big == 200].all()


# ---- designs that are right, and the usual bugs ---------------------------------------------------

def _design(scan="inclusive", low="first_present", divide="float", constant=True, grid="ceil"):
    """A host function with one global-atomics histogram, a one-thread scan and a map; the
    keywords put in one classic bug each."""
    exclusive = scan == "exclusive"
    first_present = low == "first_present"
    integer = divide == "integer"

    @cuda.jit
    def count(img, hist):
        r, c = cuda.grid(2)
        if r < img.shape[0] and c < img.shape[1]:
            cuda.atomic.add(hist, img[r, c], 1)

    @cuda.jit
    def scan_kernel(hist, cdf, info):
        if cuda.grid(1) == 0:
            running = 0
            first = -1
            for v in range(256):
                if exclusive:
                    cdf[v] = running
                running += hist[v]
                if not exclusive:
                    cdf[v] = running
                if first < 0 and (hist[v] > 0 or not first_present):
                    first = cdf[v]
            info[0] = first
            info[1] = running

    @cuda.jit
    def remap(img, cdf, info, out):
        r, c = cuda.grid(2)
        if r < img.shape[0] and c < img.shape[1]:
            low, n = info[0], info[1]
            if constant and n == low:
                out[r, c] = 0.0
            elif not integer:
                out[r, c] = (cdf[img[r, c]] - low) / float(n - low)
            elif n == low:
                out[r, c] = np.nan
            else:
                out[r, c] = (cdf[img[r, c]] - low) // (n - low)

    def equalize(img, out):
        h, w = img.shape
        hist = cuda.to_device(np.zeros(256, np.int64))
        cdf = cuda.device_array(256, np.int64)
        info = cuda.device_array(2, np.int64)
        shape = ((h + 15) // 16, (w + 15) // 16) if grid == "ceil" else \
            (max(1, h // 16), max(1, w // 16))
        count[shape, (16, 16)](img, hist)
        scan_kernel[1, 1](hist, cdf, info)
        remap[shape, (16, 16)](img, cdf, info, out)
    return equalize


@pytest.mark.parametrize("fn,expected", [
    (cap.equalize_reference, None),
    (_design(), None),
    (_design(scan="exclusive"), "EXCLUSIVE scan"),
    (_design(low="cdf0"), "takes cdf_min as cdf[0]"),
    (_design(divide="integer"), "division was done in integers"),
    (_design(constant=False), "no division by zero"),
    (_design(grid="floor"), "never written"),
], ids=["reference", "global_atomics", "exclusive", "cdf0", "integer_division", "constant",
        "whole_blocks_only"])
def test_designs_are_judged_with_the_right_hint(fn, expected):
    assert_judged(cap.equalize, fn, expected, hidden=False)


def test_hints_name_the_variant_from_the_values_alone():
    """The judge's diagnosis, without running anything: each wrong variant's values get its
    hint; the right values pass."""
    case = cap.equalize.cases()[0]
    img = case.inputs["img"]
    right = Outcome(outputs={"out": cap.equalized(img).astype(np.float32)})
    assert cap.equalize.judge(case, right).passed
    for name, values in cap.variants(img).items():
        verdict = cap.equalize.judge(case, Outcome(outputs={"out": values.astype(np.float32)}))
        assert not verdict.passed and verdict.hint == cap.specs.HINTS[name], name


# ---- the answer must be computed on the device -------------------------------------------------------

@cuda.jit
def _copy2d(src, dst):
    r, c = cuda.grid(2)
    if r < src.shape[0] and c < src.shape[1]:
        dst[r, c] = src[r, c]


def _on_host(host):
    return np.float32(cap.equalized(host))


def launder_scratch(img, out):
    """A kernel copies the image into a scratch array, the host reads that and computes."""
    grid = ((img.shape[0] + 15) // 16, (img.shape[1] + 15) // 16)
    mine = cuda.device_array(img.shape, np.uint8)
    _copy2d[grid, (16, 16)](img, mine)
    _copy2d[grid, (16, 16)](cuda.to_device(_on_host(mine.copy_to_host())), out)


def launder_numpy_argument(img, out):
    """A kernel copies the image into a NumPy array (the launch copies it back to the host)."""
    grid = ((img.shape[0] + 15) // 16, (img.shape[1] + 15) // 16)
    host = np.zeros(img.shape, np.uint8)
    _copy2d[grid, (16, 16)](img, host)
    _copy2d[grid, (16, 16)](cuda.to_device(_on_host(host)), out)


def copy_image_to_host(img, out):
    _copy2d[(1, 1), (1, 1)](img, cuda.device_array(img.shape, np.uint8))
    out.copy_to_device(_on_host(img.copy_to_host()))


@pytest.mark.parametrize("fn,expected", [
    (launder_scratch, "a device array of yours was copied to the host"),
    (launder_numpy_argument, "a device array of yours was copied to the host"),
    (copy_image_to_host, "`img` was copied to the host"),
])
def test_host_computation_fails_with_the_recorders_message(fn, expected):
    assert_judged(cap.equalize, fn, expected, hidden=False)


def test_reading_scratch_back_passes_only_where_the_problem_allows_it(monkeypatch):
    """Without ``device_only`` the recorder knows only the exercise's own arrays: laundering
    through a scratch array would pass. The capstone sets it."""
    assert cap.equalize.device_only
    monkeypatch.setattr(cap.equalize, "device_only", False)
    assert_judged(cap.equalize, launder_scratch, None, hidden=False)
