"""The capstone's graded exercise: histogram equalization of an 8-bit grayscale image, computed by
a host function of the learner's that launches kernels of its own design.

The spec (exact, so that any design can be graded). ``img`` is uint8, H × W, any sizes (1 × 1, one
row, one column, sides that are multiples of nothing); N = H·W. ``hist[v]`` is the number of
pixels equal to v (256 bins); ``cdf[v] = hist[0] + … + hist[v]`` (inclusive); ``cdf_min`` is the
cdf at the smallest value present (the first non-zero entry of cdf). The output ``out`` is float32,
H × W::

    out[p] = (cdf[img[p]] - cdf_min) / (N - cdf_min)          (0 everywhere when N == cdf_min)

so the darkest value present maps to 0, the brightest to 1, and each value in between to the
fraction of the other pixels at or below it. ``N == cdf_min`` exactly when every pixel has the
same value (a 1 × 1 image included).

**The tolerance, from the error bound of computing that ratio in float32.** The counts are exact
integers (a histogram with atomics loses none). Write ``a = cdf[img[p]]``, ``b = cdf_min``, ``q =
(a - b) / (N - b)`` (exact), and ``u = 2⁻²⁴`` (float32's unit roundoff). A float32 computation
converts the counts to float32, subtracts once in the numerator and once in the denominator, and
divides once:

- converting a count c to float32 is exact while c ≤ 2²⁴, and otherwise off by at most ``u·c``
  (call that error bound ``conv(c)``);
- the numerator ``fl(a) - fl(b)`` is then off by at most ``conv(a) + conv(b)`` before it is
  rounded, and the rounding adds at most ``u`` relative (nothing when the operands are exact and
  below 2²⁴: their difference is an integer below 2²⁴, exact in float32); the denominator
  likewise, with ``conv(N) + conv(b)``;
- the division adds at most ``u`` relative.

To first order, then, ``|q̂ - q| ≤ (conv(a) + conv(b) + q·(conv(N) + conv(b))) / (N - b) + 3u·q``.
The tolerance is that bound with one more ``u·q`` (a design that multiplies by a reciprocal
rounds once more), and doubled for the second-order terms: ``2·(conversions) / (N − b) + 4u·q``.
For images of up to 2²⁴ pixels (every CPU-mode case) it is ``4u·q``: four units of float32
roundoff relative to the value, and an exact 0 where q is 0 (the darkest value present, a constant
image). Subtracting the counts in integers first (exact) only makes the error smaller. The
reference is the same formula in float64 from exact integer counts.

Cases. A case's size is the shape (H, W); which image it gets follows from the shape
(:func:`kind_of`), so a verdict can name it: a low-contrast image (a photo-like picture squeezed
into a narrow band of values), a photo-like image using most values, a constant image, one using
all 256 values, one with two values only, and one with values 0 and 255 absent.

The learner's ``equalize(img, out)`` receives device arrays and may launch any kernels on any
scratch device arrays of its own; the data-flow recorder (:mod:`autograder.grading.provenance`,
``device_only``) fails a call that reads anything back to the host or whose outputs were not
stored by its kernels from the pixels they read.
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import Verdict
from autograder.grading.problem import Baseline, Problem, Sizes
from autograder.problems.ch12c.references import NUM_BINS, reference_equalize
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.images import test_image, to_gray

U32 = 2.0 ** -24          # float32's unit roundoff
EXACT = 2 ** 24           # counts up to this convert to float32 exactly

KINDS = ("narrow", "photo", "constant", "all", "two", "clipped")
KIND_LABELS = {"narrow": "low contrast: values in a narrow band",
               "photo": "a photo-like image",
               "constant": "every pixel the same value",
               "all": "every value from 0 to 255 present",
               "two": "two values only",
               "clipped": "values 0 and 255 absent"}


def kind_of(height: int, width: int) -> str:
    """The image a case of shape (height, width) gets: fixed by the shape."""
    return KINDS[(int(height) + int(width)) % len(KINDS)]


def _label(size) -> str:
    h, w = (int(s) for s in size)
    return f"a {h} × {w} image ({KIND_LABELS[kind_of(h, w)]})"


# ---- images ----------------------------------------------------------------------------------

def gray_image(rng: np.random.Generator, height: int, width: int, kind: str | None = None
               ) -> np.ndarray:
    """A uint8 height × width image of the given kind (default: the shape's, :func:`kind_of`)."""
    h, w = int(height), int(width)
    kind = kind or kind_of(h, w)
    if kind == "constant":
        return np.full((h, w), int(rng.integers(0, 256)), np.uint8)
    if kind == "two":
        low, high = sorted(rng.choice(256, 2, replace=False))
        return np.where(rng.random((h, w)) < rng.uniform(0.2, 0.8), low, high).astype(np.uint8)
    if kind == "all":
        img = rng.integers(0, 256, h * w)
        if h * w >= NUM_BINS:                  # every value at least once, at random places
            img[rng.choice(h * w, NUM_BINS, replace=False)] = np.arange(NUM_BINS)
        return img.reshape(h, w).astype(np.uint8)
    gray = to_gray(test_image(h, w, rng))      # float64 in [0, 1], with structure
    if kind == "narrow":
        span = int(rng.integers(6, 24))
        low = int(rng.integers(30, 256 - span - 30))
        return (low + np.rint(gray * span)).astype(np.uint8)
    if kind == "clipped":
        return (1 + np.rint(gray * 253)).astype(np.uint8)
    return np.clip(np.rint(gray * 255), 0, 255).astype(np.uint8)


def _inputs(rng, size):
    return {"img": gray_image(rng, *size)}


def speed_image(rng, size):
    """A large photo-like image fast: one photo-like tile of 1024 × 1024 repeated, with noise."""
    h, w = (int(s) for s in size)
    tile = gray_image(rng, 1024, 1024, "photo")
    img = np.tile(tile, (-(-h // 1024), -(-w // 1024)))[:h, :w]
    noise = rng.integers(-2, 3, (h, w), dtype=np.int16)
    return {"img": np.clip(img.astype(np.int16) + noise, 0, 255).astype(np.uint8)}


# ---- the spec ----------------------------------------------------------------------------------

def counts(img: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(hist, cdf, cdf_min, N) of an image, exact integers (int64)."""
    img = np.asarray(img)
    hist = np.bincount(img.reshape(-1), minlength=NUM_BINS).astype(np.int64)
    cdf = np.cumsum(hist)
    n = int(img.size)
    cdf_min = int(cdf[int(img.min())]) if n else 0
    return hist, cdf, cdf_min, n


def equalized(img: np.ndarray) -> np.ndarray:
    """The spec in float64: (cdf[img] − cdf_min) / (N − cdf_min), or 0 for a constant image."""
    _, cdf, cdf_min, n = counts(img)
    if n == cdf_min:
        return np.zeros(np.shape(img), np.float64)
    return (cdf[np.asarray(img)] - cdf_min).astype(np.float64) / float(n - cdf_min)


def _conv(c):
    """The most converting a count c to float32 can be off by (0 up to 2^24: exact)."""
    c = np.asarray(c, np.float64)
    return np.where(c <= EXACT, 0.0, U32 * c)


def tolerance_of_image(img: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """The error bound of the module's docstring, per pixel."""
    _, cdf, cdf_min, n = counts(img)
    if n == cdf_min:
        return np.zeros_like(expected)
    a = cdf[np.asarray(img)]
    conversions = _conv(a) + _conv(cdf_min) + expected * (_conv(n) + _conv(cdf_min))
    return 2.0 * conversions / float(n - cdf_min) + 4.0 * U32 * expected


def _spec(img, **launch):
    return {"out": equalized(img)}


def _tolerance(inputs, expected):
    return {"out": tolerance_of_image(inputs["img"], expected["out"])}


def _outputs(size):
    return {"out": ((int(size[0]), int(size[1])), np.float32)}


def sample_equalized(inputs, idx):
    """(expected, tolerance) at flat pixel indices (the speed test's samples)."""
    img = inputs["img"]
    _, cdf, cdf_min, n = counts(img)
    values = img.reshape(-1)[np.asarray(idx)]
    if n == cdf_min:
        exp = np.zeros(values.shape)
        return {"out": exp}, {"out": exp.copy()}
    exp = (cdf[values] - cdf_min).astype(np.float64) / float(n - cdf_min)
    conversions = _conv(cdf[values]) + _conv(cdf_min) + exp * (_conv(n) + _conv(cdf_min))
    return {"out": exp}, {"out": 2.0 * conversions / float(n - cdf_min) + 4.0 * U32 * exp}


def _launch(equalize, inputs, outputs, case):
    equalize(inputs["img"], outputs["out"])


def equalize_bytes(size) -> int:
    """The bytes any design must move: the image read twice (the histogram must be complete
    before the first pixel can be mapped) and the output written once, 1 + 1 + 4 per pixel."""
    return 6 * int(size[0]) * int(size[1])


# ---- verdicts that say what a wrong equalization usually means --------------------------------

def variants(img: np.ndarray) -> dict[str, np.ndarray]:
    """What the usual wrong designs compute on ``img`` (float64), by the bug's name."""
    hist, cdf, cdf_min, n = counts(img)
    img = np.asarray(img)
    out = {}
    excl = cdf - hist
    excl_min = int(excl[int(img.min())])
    if n > excl_min:
        out["exclusive"] = (excl[img] - excl_min) / float(n - excl_min)
    first = int(cdf[0])
    if n > first and first != cdf_min:
        out["cdf0"] = (cdf[img] - first) / float(n - first)
    if n > cdf_min:
        out["floor"] = np.floor((cdf[img] - cdf_min) / float(n - cdf_min))
        out["unnormalized"] = (cdf[img] - cdf_min).astype(np.float64)
        if first != 0:                 # else the same values as "cdf0"
            out["over_n"] = cdf[img] / float(n)
    return out


HINTS = {
    "exclusive": ("your output is what an EXCLUSIVE scan gives (cdf[v] counting only the values "
                  "below v): the spec's cdf is inclusive, cdf[v] = hist[0] + ... + hist[v], so "
                  "the brightest value present maps to 1."),
    "cdf0": ("your output takes cdf_min as cdf[0]. cdf_min is the cdf at the smallest value "
             "PRESENT in the image: when no pixel is 0, cdf[0] is 0 and the darkest pixels do not "
             "map to 0. Find the first bin that is not empty."),
    "floor": ("your output is 0 or 1 only: the division was done in integers. Convert the two "
              "differences to float32 before dividing."),
    "unnormalized": ("your output is cdf[img] − cdf_min, never divided by N − cdf_min."),
    "over_n": ("your output is cdf[img] / N: subtract cdf_min from both the numerator and N, so "
               "that the darkest value present maps to 0 and the brightest to 1."),
}
CONSTANT_HINT = ("every pixel of this image has the same value, so N − cdf_min is 0: the spec "
                 "says the output is 0 everywhere (no division by zero, no NaN).")
MISSING_HINT = ("some pixels were never written. Does your map cover every row and column "
                "(ceil(H / block rows) × ceil(W / block columns) blocks, and a bounds check "
                "`if r < H and c < W`), whatever the sides (1 × W, H × 1, sides that are not "
                "multiples of your block)?")
RACE_HINT = ("two threads updated the same histogram bin without an atomic: use "
             "cuda.atomic.add(bins, value, 1), in shared memory as in global memory.")


class EqualizeProblem(Problem):
    """Verdicts that name the usual bugs of an equalization."""

    def simulated_threads(self, case) -> float:
        # A design may launch a thread per pixel twice (histogram, map), and a few small kernels.
        return 3.0 * case.thread_count + 4096

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs=show_inputs)
        if verdict.passed:
            return verdict
        if outcome.error:
            if "race" in outcome.error.lower():
                verdict.hint = RACE_HINT
            return verdict
        got = outcome.outputs.get("out")
        if got is None or np.shape(got) != tuple(case.size):
            return verdict
        img = case.inputs["img"]
        got = np.asarray(got, np.float64)
        _, _, cdf_min, n = counts(img)
        missing = np.isnan(got)
        if n == cdf_min:
            verdict.hint = CONSTANT_HINT
            return verdict
        if missing.any() and not missing.all():
            verdict.hint = MISSING_HINT
            return verdict
        if not missing.any():
            expected = equalized(img)
            for name, values in variants(img).items():
                if np.allclose(got, values, rtol=1e-5, atol=1e-6) and \
                        not np.allclose(values, expected, rtol=1e-5, atol=1e-6):
                    verdict.hint = HINTS[name]
                    break
        return verdict


# ---- CPU baselines --------------------------------------------------------------------------------

def _numpy_equalize(img, out):
    hist = np.bincount(img.reshape(-1), minlength=NUM_BINS)
    cdf = np.cumsum(hist)
    cdf_min = cdf[int(img.min())]
    n = img.size
    lut = np.zeros(NUM_BINS, np.float32) if n == cdf_min else \
        ((cdf - cdf_min) / np.float64(n - cdf_min)).astype(np.float32)
    np.take(lut, img, out=out)


@njit_on_first_call
def _serial_jit():
    import numba

    @numba.njit(cache=False)
    def serial(img, out):
        hist = np.zeros(256, np.int64)
        h, w = img.shape
        for r in range(h):
            for c in range(w):
                hist[img[r, c]] += 1
        n = h * w
        lut = np.zeros(256, np.float32)
        running = 0
        cdf_min = 0
        for v in range(256):
            running += hist[v]
            if cdf_min == 0:
                cdf_min = running
        running = 0
        for v in range(256):
            running += hist[v]
            if n > cdf_min and running >= cdf_min:
                lut[v] = np.float32(running - cdf_min) / np.float32(n - cdf_min)
        for r in range(h):
            for c in range(w):
                out[r, c] = lut[img[r, c]]
    return serial


def _serial_equalize(img, out):
    _serial_jit(img, out)


BASELINES = {
    "numpy": Baseline("NumPy bincount + cumsum + take (1 core)", _numpy_equalize),
    "serial": Baseline("numba.njit loops (1 core)", _serial_equalize),
}


# ---- the exercise ---------------------------------------------------------------------------------

SPEED_SIZE = (4097, 8191)

equalize = EqualizeProblem(
    "equalize",
    title="Histogram equalization of an 8-bit image: a host function and kernels of your design",
    spec=_spec, make_inputs=_inputs, outputs=_outputs, tolerance=_tolerance, launch=_launch,
    # (H, W); (H + W) % 6 picks the image: 37 × 53 low contrast, 1 × 1 (a constant), 13 × 7
    # constant, 23 × 28 all 256 values. Hidden: 17 × 41 two values, 29 × 42 values 0 and 255
    # absent, 1 × 1000 one row (clipped), 1001 × 1 one column (low contrast), 61 × 132 photo-like
    # (4 times the largest visible image), and two random shapes. On a GPU the 4097 × 8191
    # image (33.6 million pixels) comes first among the hidden ones.
    cpu_sizes=Sizes(visible=((37, 53), (1, 1), (13, 7), (23, 28)),
                    hidden=((17, 41), (29, 42), (1, 1000), (1001, 1), (61, 132)),
                    hidden_random=(2, 1, 90)),
    gpu_sizes=Sizes(visible=((37, 53), (1, 1), (13, 7), (23, 28)),
                    hidden=(SPEED_SIZE, (17, 41), (29, 42), (1, 1000), (1001, 1), (61, 132)),
                    hidden_random=(3, 1, 3000), speed=SPEED_SIZE),
    bytes_moved=equalize_bytes, sample_spec=sample_equalized, size_label=_label,
    reference=reference_equalize, speed_inputs=speed_image, baselines=BASELINES,
    device_only=True,
)
