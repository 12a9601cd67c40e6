"""Chapter 3's graded exercises: RGB to gray, the box blur, the naive matmul, and the least time
an image kernel can take."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, U32, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch03.references import (cupy_gray, reference_blur, reference_gray,
                                                 reference_matmul_naive)
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.images import GRAY_WEIGHTS, test_image, to_gray
from autograder.problems.kit.inputs import grid_over, random_floats_fast, spread, unravel
from autograder.problems.kit.matmul import (MATMUL_BASELINES, SPEED_MATMUL, cupy_matmul,
                                            matmul_blocks, matmul_bytes_moved, matmul_flops,
                                            matmul_inputs, matmul_launch, matmul_outputs,
                                            matmul_sample, matmul_spec, matmul_speed_inputs,
                                            matmul_tolerance)

# Block shapes (x, y) the hidden tests draw from; the visible check uses 16 × 8 (not square, so a
# kernel that mixes up blockDim.x and blockDim.y fails at once).
BLOCK_SHAPES = ((16, 8), (8, 16), (8, 8), (16, 16), (32, 4))
VISIBLE_BLOCK = (16, 8)


def box_blur(image: np.ndarray, radius: int) -> np.ndarray:
    """The spec of Exercise 3.2 in float64: each pixel becomes the mean of the pixels of its
    (2 radius + 1)² window that lie inside the image (so edge pixels average fewer values)."""
    image = np.asarray(image, dtype=np.float64)
    total, count = _window_sums(image, radius)
    return total / count


def _window_sums(image: np.ndarray, radius: int) -> tuple[np.ndarray, np.ndarray]:
    h, w = image.shape
    padded = np.zeros((h + 2 * radius, w + 2 * radius))
    padded[radius:radius + h, radius:radius + w] = image
    inside = np.zeros_like(padded)
    inside[radius:radius + h, radius:radius + w] = 1.0
    total, count = np.zeros((h, w)), np.zeros((h, w))
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            total += padded[dy:dy + h, dx:dx + w]
            count += inside[dy:dy + h, dx:dx + w]
    return total, count


# ---- speed tests: sizes, launch shape, inputs ----------------------------------------------------

# A 4097 × 8191 image: 134 MB per float32 plane, far beyond the L2 cache; sides not multiples of
# any block. Speed runs launch 32 × 8 blocks: a warp spans 32 consecutive pixels of a row.
SPEED_IMAGE = (4097, 8191)
SPEED_BLOCK = (32, 8)


def _speed_launch_image(size):
    return grid_over(size[0], size[1], SPEED_BLOCK), SPEED_BLOCK


# ---- 3.1 RGB to gray -----------------------------------------------------------------------------

def _gray_inputs(rng, size):
    h, w = size
    return {"image": spread(rng, test_image(h, w, rng))}


def _gray_spec(image, **launch):
    return {"gray": to_gray(image)}


def _gray_tolerance(inputs, expected):
    # Three products and two additions in fp32 are within gamma_3 * sum |w_i x_i| of the exact
    # weighted sum (Higham, dot products); one more rounding for the weights themselves (0.299 is
    # not a float32): gamma_4. Computing in float64 and storing once is closer still.
    image = inputs["image"].astype(np.float64)
    mag = sum(abs(w) * np.abs(image[..., k]) for k, w in enumerate(GRAY_WEIGHTS))
    return {"gray": gamma(4) * mag + TINY32}


def _gray_outputs(size):
    h, w = size
    return {"gray": ((h, w), np.float32)}


def _gray_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["image"], outputs["gray"])


def _image_blocks(size, block):
    return grid_over(size[0], size[1], block)


def _numpy_gray(image, gray):
    np.dot(image, np.asarray(GRAY_WEIGHTS, dtype=np.float32), out=gray)


@njit_on_first_call
def _gray_loop():
    import numba

    @numba.njit(cache=False)
    def rgb_to_gray(image, gray):
        for r in range(gray.shape[0]):
            for c in range(gray.shape[1]):
                gray[r, c] = (np.float32(0.299) * image[r, c, 0] + np.float32(0.587) * image[r, c, 1]
                              + np.float32(0.114) * image[r, c, 2])
    return rgb_to_gray


def _serial_gray(image, gray):
    _gray_loop(image, gray)


def _gray_speed_inputs(rng, size):
    h, w = size
    return {"image": random_floats_fast(rng, h * w * 3).reshape(h, w, 3)}


def _gray_sample(inputs, idx):
    h, w, _ = inputs["image"].shape
    pixels = inputs["image"].reshape(h * w, 3)[idx].astype(np.float64)
    expected = {"gray": to_gray(pixels)}
    mag = sum(abs(wt) * np.abs(pixels[:, k]) for k, wt in enumerate(GRAY_WEIGHTS))
    return expected, {"gray": gamma(4) * mag + TINY32}


rgb_to_gray = Problem(
    "rgb_to_gray", title="RGB image to gray, one thread per pixel on a 2-D grid",
    spec=_gray_spec, make_inputs=_gray_inputs, outputs=_gray_outputs, tolerance=_gray_tolerance,
    launch=_gray_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_image_blocks,
    cpu_sizes=Sizes(visible=((29, 45), (6, 3), (1, 1)), hidden=((45, 29), (17, 1), (61, 89)),
                    hidden_random=(2, 1, 50)),
    gpu_sizes=Sizes(visible=((1081, 1919), (29, 45), (6, 3), (1, 1)), hidden=((45, 29), (17, 1)),
                    hidden_random=(3, 1, 3000), speed=SPEED_IMAGE),
    bytes_moved=lambda s: 16 * s[0] * s[1], flops=lambda s: 5 * s[0] * s[1],
    baselines={"numpy": Baseline("NumPy image @ weights (1 core)", _numpy_gray),
               "serial": Baseline("numba.njit loop (1 core)", _serial_gray)},
    reference=reference_gray, speed_inputs=_gray_speed_inputs, sample_spec=_gray_sample,
    speed_launch=_speed_launch_image, vendor=cupy_gray, vendor_label="CuPy image @ weights",
    speed=SpeedBar(min_fraction_of_reference=0.7, baseline="numpy", min_speedup=20.0),
    size_label=lambda s: f"a {s[0]} × {s[1]} image (rows × columns)",
    value_hint=("gray[row, col] = 0.299 r + 0.587 g + 0.114 b with r, g, b = image[row, col, 0], "
                "image[row, col, 1], image[row, col, 2]: is each weight on its own channel?"),
)


# ---- 3.2 box blur --------------------------------------------------------------------------------

def blur_radius(size) -> int:
    """The radius a case of this size uses (1, 2 or 3; fixed by the size so that verdicts can
    name it): small images get windows larger than themselves too."""
    h, w = size
    return 1 + (h + 2 * w) % 3


def _blur_inputs(rng, size):
    h, w = size
    gray = to_gray(test_image(h, w, rng))
    return {"image": spread(rng, gray), "radius": blur_radius(size)}


def _blur_spec(image, radius, **launch):
    return {"out": box_blur(image, int(radius))}


def _blur_tolerance(inputs, expected):
    # A sum of k fp32 values is within gamma_(k-1) * sum |x| of the exact sum; dividing by k
    # (or multiplying by a rounded 1/k) adds at most two roundings of the mean. So:
    # |got - mean| <= gamma_k * mean|x| + 2u |mean|, with k the in-bounds pixels of each window.
    image, radius = inputs["image"].astype(np.float64), int(inputs["radius"])
    total_abs, count = _window_sums(np.abs(image), radius)
    k = int(count.max())
    return {"out": gamma(k) * total_abs / count + 2 * U32 * np.abs(expected["out"]) + TINY32}


def _blur_outputs(size):
    h, w = size
    return {"out": ((h, w), np.float32)}


def _blur_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["image"], outputs["out"], inputs["radius"])


@njit_on_first_call
def _blur_loop():
    import numba

    @numba.njit(cache=False)
    def blur(image, out, radius):
        h, w = image.shape
        for r in range(h):
            for c in range(w):
                total, count = np.float32(0), 0
                for rr in range(max(r - radius, 0), min(r + radius + 1, h)):
                    for cc in range(max(c - radius, 0), min(c + radius + 1, w)):
                        total += image[rr, cc]
                        count += 1
                out[r, c] = total / np.float32(count)
    return blur


def _serial_blur(image, radius, out):
    _blur_loop(image, out, radius)


def _numpy_blur(image, radius, out):
    # Summed-area table: the window sums in O(1) per pixel (float64, then stored as float32).
    h, w = image.shape
    sat = np.zeros((h + 1, w + 1))
    sat[1:, 1:] = np.cumsum(np.cumsum(image, axis=0, dtype=np.float64), axis=1)
    r0 = np.clip(np.arange(h) - radius, 0, h)
    r1 = np.clip(np.arange(h) + radius + 1, 0, h)
    c0 = np.clip(np.arange(w) - radius, 0, w)
    c1 = np.clip(np.arange(w) + radius + 1, 0, w)
    total = (sat[r1][:, c1] - sat[r0][:, c1] - sat[r1][:, c0] + sat[r0][:, c0])
    out[...] = total / np.outer(r1 - r0, c1 - c0)


def _blur_speed_inputs(rng, size):
    h, w = size
    return {"image": random_floats_fast(rng, h * w).reshape(h, w), "radius": blur_radius(size)}


def _blur_sample(inputs, idx):
    image, radius = inputs["image"], int(inputs["radius"])
    h, w = image.shape
    rows, cols = unravel(idx, (h, w))
    total, total_abs, count = (np.zeros(idx.size) for _ in range(3))
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            r, c = rows + dy, cols + dx
            inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
            v = image[np.clip(r, 0, h - 1), np.clip(c, 0, w - 1)].astype(np.float64) * inside
            total += v
            total_abs += np.abs(v)
            count += inside
    mean = total / count
    k = (2 * radius + 1) ** 2
    return {"out": mean}, {"out": gamma(k) * total_abs / count + 2 * U32 * np.abs(mean) + TINY32}


blur = Problem(
    "blur", title="Box blur of radius r on a 2-D grid, edges averaging fewer pixels",
    spec=_blur_spec, make_inputs=_blur_inputs, outputs=_blur_outputs, tolerance=_blur_tolerance,
    launch=_blur_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_image_blocks,
    # radius 2, 1 and 3 (see blur_radius); the 2 × 3 image is smaller than its window.
    cpu_sizes=Sizes(visible=((22, 33), (9, 6), (2, 3)), hidden=((33, 22), (1, 7), (47, 67)),
                    hidden_random=(2, 1, 40)),
    gpu_sizes=Sizes(visible=((1081, 1919), (22, 33), (9, 6), (2, 3)), hidden=((33, 22), (1, 7)),
                    hidden_random=(3, 1, 2000), speed=SPEED_IMAGE),
    bytes_moved=lambda s: 8 * s[0] * s[1], flops=lambda s: 50 * s[0] * s[1],
    baselines={"numpy": Baseline("NumPy summed-area table (1 core)", _numpy_blur),
               "serial": Baseline("numba.njit loop (1 core)", _serial_blur)},
    reference=reference_blur, speed_inputs=_blur_speed_inputs, sample_spec=_blur_sample,
    speed_launch=_speed_launch_image,
    speed=SpeedBar(min_fraction_of_reference=0.7, baseline="numpy", min_speedup=20.0),
    size_label=lambda s: f"a {s[0]} × {s[1]} image (rows × columns), radius {blur_radius(s)}",
    value_hint=("wrong only near the edges? There the window holds fewer pixels: divide by the "
                "number of in-bounds pixels you added, not by (2r + 1)². Wrong everywhere? Does "
                "the window run from row - radius to row + radius inclusive, for this radius?"),
)


# ---- 3.3 naive matrix multiplication -------------------------------------------------------------

matmul_naive = Problem(
    "matmul_naive", title="C = A @ B, one thread per element of C on a 2-D grid",
    spec=matmul_spec, make_inputs=matmul_inputs, outputs=matmul_outputs,
    tolerance=matmul_tolerance, launch=matmul_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=matmul_blocks,
    # (M, K, N): the first has K larger than M and N, so a loop over the wrong dimension sums too
    # few terms (a wrong value, not a crash); the hidden ones have K smaller, K = 1 and a row.
    cpu_sizes=Sizes(visible=((19, 37, 27), (5, 3, 7), (1, 1, 1)),
                    hidden=((27, 9, 19), (1, 21, 33), (41, 53, 37)), hidden_random=(2, 1, 40)),
    gpu_sizes=Sizes(visible=((1023, 517, 1537), (19, 37, 27), (5, 3, 7), (1, 1, 1)),
                    hidden=((27, 9, 19), (1, 21, 33)), hidden_random=(3, 1, 1200),
                    speed=SPEED_MATMUL),
    bytes_moved=matmul_bytes_moved, flops=matmul_flops, baselines=MATMUL_BASELINES,
    size_label=lambda s: f"A {s[0]} × {s[1]} times B {s[1]} × {s[2]}",
    # No speed cell (this kernel is the slow first version), but `aag bench` times the reference
    # at 4096³ next to cuBLAS: the gap chapters 5 and 6 close.
    reference=reference_matmul_naive, speed_inputs=matmul_speed_inputs,
    sample_spec=matmul_sample, speed_launch=lambda s: (grid_over(s[0], s[2], (16, 16)), (16, 16)),
    vendor=cupy_matmul, vendor_label="CuPy matmul (cuBLAS SGEMM)",
    value_hint=("C[row, col] is the sum over k of A[row, k] * B[k, col], with k running over "
                "K = A.shape[1] (= B.shape[0]), which is neither C's rows nor its columns."),
)


# ---- 3.4 predict: the least time an image kernel can take ----------------------------------------

def _image_bound_spec(height, width, bytes_in, bytes_out, bandwidth):
    return {"seconds": height * width * (bytes_in + bytes_out) / bandwidth}


def _image_bound_inputs(rng, count):
    height = rng.integers(1, 20_000, count).astype(np.float64)
    width = rng.integers(1, 20_000, count).astype(np.float64)
    bytes_in = rng.choice([1, 2, 3, 4, 12, 16], count).astype(np.float64)
    bytes_out = rng.choice([1, 2, 4, 8], count).astype(np.float64)
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)       # 30 GB/s to 10 TB/s
    # First: Exercise 3.1's gray conversion (12 bytes in, 4 out) and 3.2's blur (4 in, 4 out)
    # on the speed test's 4097 × 8191 image, at an H200's 4.8 TB/s; then a one-pixel image.
    height[:3], width[:3] = [4097, 4097, 1], [8191, 8191, 1]
    bytes_in[:3], bytes_out[:3], bandwidth[:3] = [12, 4, 1], [4, 4, 1], 4.8e12
    return {"height": height, "width": width, "bytes_in": bytes_in, "bytes_out": bytes_out,
            "bandwidth": bandwidth}


image_time_bound = formula_problem(
    "image_time_bound", title="The least time a one-pass image kernel can take",
    function="image_time_bound",
    args=(("height", int), ("width", int), ("bytes_in", int), ("bytes_out", int),
          ("bandwidth", float)),
    results=("seconds",), spec=_image_bound_spec, make_inputs=_image_bound_inputs,
    # Three float64 roundings in any order: 16 u relative is generous and still exact enough
    # that a number rounded by hand fails.
    tolerance=lambda inputs, expected: {"seconds": 16 * 2.0 ** -53 * expected["seconds"]},
    sizes=Sizes(visible=(6,), hidden=(200,)),
    value_hint=("every pixel is read once (bytes_in) and written once (bytes_out), and nothing "
                "moves faster than the bandwidth: height · width · (bytes_in + bytes_out) / "
                "bandwidth seconds."),
)
