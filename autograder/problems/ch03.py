"""Chapter 3 (PMPP ch. 3, Multidimensional grids and data): kernels on 2-D grids over row-major
arrays: an RGB image to gray, a box blur, and a naive matrix multiplication.

Sizes are shapes (see :class:`autograder.problem.Case`): an image's ``(height, width)`` or a
matmul's ``(M, K, N)``. The learner writes only the kernel; the problem launches it with 2-D blocks
of ``case.threads = (x, y)`` threads and a grid of ``case.blocks = (ceil(cols / x), ceil(rows / y))``
blocks, so x runs along a row (columns) and y down the image (rows).
"""

from __future__ import annotations

import numpy as np

from ..checks import TINY32, U32, gamma
from ..problem import Baseline, Problem, Sizes
from .common import cores, random_floats

GRAY_WEIGHTS = (0.299, 0.587, 0.114)   # ITU-R BT.601 luma weights for r, g, b

# Block shapes (x, y) the hidden tests draw from; the visible check uses 16 × 8 (not square, so a
# kernel that mixes up blockDim.x and blockDim.y fails at once).
BLOCK_SHAPES = ((16, 8), (8, 16), (8, 8), (16, 16), (32, 4))
VISIBLE_BLOCK = (16, 8)


# ---- a test image with real structure ------------------------------------------------------------

def test_image(height: int, width: int, seed: int | np.random.Generator = 0) -> np.ndarray:
    """A height × width × 3 float32 RGB image in [0, 1] with something for every bug to hit: a
    colour gradient (different per channel and direction), a bright rectangle with sharp edges, a
    disk, a one-pixel diagonal line, a fine checkerboard patch, and noise. Seeded, no downloads."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    v = yy / max(height - 1, 1)          # 0 at the top, 1 at the bottom
    u = xx / max(width - 1, 1)           # 0 at the left, 1 at the right
    img = np.stack([0.15 + 0.6 * u, 0.1 + 0.5 * v, 0.7 - 0.4 * (u + v) / 2], axis=-1)
    # A rectangle with sharp edges, somewhere in the left half.
    r0, c0 = int(rng.integers(0, max(height // 2, 1))), int(rng.integers(0, max(width // 2, 1)))
    rect = (yy >= r0) & (yy < r0 + max(height // 3, 1)) & (xx >= c0) & (xx < c0 + max(width // 4, 1))
    img[rect] = (0.95, 0.85, 0.2)
    # A disk, somewhere in the right half.
    cy, cx = rng.uniform(0.2, 0.8) * height, rng.uniform(0.5, 0.9) * width
    radius = max(min(height, width) / 5, 1.0)
    img[(yy - cy) ** 2 + (xx - cx) ** 2 <= radius ** 2] = (0.1, 0.3, 0.9)
    # A one-pixel line from the top-left corner going down-right (a diagonal only if square).
    line = np.abs(yy - xx * (height / max(width, 1))) < 0.5
    img[line] = (1.0, 1.0, 1.0)
    # A checkerboard of 2 × 2 squares in the bottom-right corner: high frequencies for the blur.
    checker = (yy >= height * 0.7) & (xx >= width * 0.75) & (((yy // 2 + xx // 2) % 2) == 0)
    img[checker] = (0.0, 0.0, 0.0)
    img += rng.normal(0.0, 0.04, img.shape)
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def to_gray(image: np.ndarray) -> np.ndarray:
    """The spec of Exercise 3.1 in float64: 0.299 r + 0.587 g + 0.114 b."""
    image = np.asarray(image, dtype=np.float64)
    w = GRAY_WEIGHTS
    return w[0] * image[..., 0] + w[1] * image[..., 1] + w[2] * image[..., 2]


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


def _spread(rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
    """A random scale (10^-3 .. 10^3) and offset, as for every exercise's inputs: a tolerance
    tuned to values near 1, or a result of zeros, cannot pass by accident."""
    scale = 10.0 ** rng.uniform(-3, 3)
    offset = rng.uniform(-1, 1) * scale
    return (offset + scale * values.astype(np.float64)).astype(np.float32)


def _grid_over(rows: int, cols: int, block: tuple[int, int]) -> tuple[int, int]:
    """Blocks (x, y) covering a rows × cols output: x across the columns, y down the rows."""
    bx, by = block
    return ((cols + bx - 1) // bx, (rows + by - 1) // by)


# ---- 3.1 RGB to gray -----------------------------------------------------------------------------

def _gray_inputs(rng, size):
    h, w = size
    return {"image": _spread(rng, test_image(h, w, rng))}


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
    return _grid_over(size[0], size[1], block)


def _numpy_gray(image, gray):
    np.dot(image, np.asarray(GRAY_WEIGHTS, dtype=np.float32), out=gray)


_jit = {}


def _serial_gray(image, gray):
    if "gray" not in _jit:
        import numba

        @numba.njit(cache=False)
        def rgb_to_gray(image, gray):
            for r in range(gray.shape[0]):
                for c in range(gray.shape[1]):
                    gray[r, c] = (np.float32(0.299) * image[r, c, 0] + np.float32(0.587) * image[r, c, 1]
                                  + np.float32(0.114) * image[r, c, 2])
        _jit["gray"] = rgb_to_gray
    _jit["gray"](image, gray)


rgb_to_gray = Problem(
    "rgb_to_gray", title="RGB image to gray, one thread per pixel on a 2-D grid",
    spec=_gray_spec, make_inputs=_gray_inputs, outputs=_gray_outputs, tolerance=_gray_tolerance,
    launch=_gray_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_image_blocks,
    cpu_sizes=Sizes(visible=((29, 45), (6, 3), (1, 1)), hidden=((45, 29), (17, 1)),
                    hidden_random=(2, 1, 50)),
    gpu_sizes=Sizes(visible=((1081, 1919), (29, 45), (6, 3), (1, 1)), hidden=((45, 29), (17, 1)),
                    hidden_random=(3, 1, 3000)),
    bytes_moved=lambda s: 16 * s[0] * s[1], flops=lambda s: 5 * s[0] * s[1],
    baselines={"numpy": Baseline("NumPy image @ weights (1 core)", _numpy_gray),
               "serial": Baseline("numba.njit loop (1 core)", _serial_gray)},
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
    return {"image": _spread(rng, gray), "radius": blur_radius(size)}


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


def _serial_blur(image, radius, out):
    if "blur" not in _jit:
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
        _jit["blur"] = blur
    _jit["blur"](image, out, radius)


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


blur = Problem(
    "blur", title="Box blur of radius r on a 2-D grid, edges averaging fewer pixels",
    spec=_blur_spec, make_inputs=_blur_inputs, outputs=_blur_outputs, tolerance=_blur_tolerance,
    launch=_blur_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_image_blocks,
    # radius 2, 1 and 3 (see blur_radius); the 2 × 3 image is smaller than its window.
    cpu_sizes=Sizes(visible=((22, 33), (9, 6), (2, 3)), hidden=((33, 22), (1, 7)),
                    hidden_random=(2, 1, 40)),
    gpu_sizes=Sizes(visible=((1081, 1919), (22, 33), (9, 6), (2, 3)), hidden=((33, 22), (1, 7)),
                    hidden_random=(3, 1, 2000)),
    bytes_moved=lambda s: 8 * s[0] * s[1], flops=lambda s: 50 * s[0] * s[1],
    baselines={"numpy": Baseline("NumPy summed-area table (1 core)", _numpy_blur),
               "serial": Baseline("numba.njit loop (1 core)", _serial_blur)},
    size_label=lambda s: f"a {s[0]} × {s[1]} image (rows × columns), radius {blur_radius(s)}",
    value_hint=("wrong only near the edges? There the window holds fewer pixels: divide by the "
                "number of in-bounds pixels you added, not by (2r + 1)². Wrong everywhere? Does "
                "the window run from row - radius to row + radius inclusive, for this radius?"),
)


# ---- 3.3 naive matrix multiplication -------------------------------------------------------------

def _matmul_inputs(rng, size):
    m, k, n = size
    return {"A": random_floats(rng, m * k).reshape(m, k), "B": random_floats(rng, k * n).reshape(k, n)}


def _matmul_spec(A, B, **launch):
    return {"C": A @ B}


def _matmul_tolerance(inputs, expected):
    # A dot product of length K in fp32 (products and a running sum, fused or not) is within
    # gamma_K * sum_k |a_ik b_kj| of the exact one.
    a, b = inputs["A"].astype(np.float64), inputs["B"].astype(np.float64)
    return {"C": gamma(a.shape[1]) * (np.abs(a) @ np.abs(b)) + TINY32}


def _matmul_outputs(size):
    m, k, n = size
    return {"C": ((m, n), np.float32)}


def _matmul_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["A"], inputs["B"], outputs["C"])


def _matmul_blocks(size, block):
    m, k, n = size
    return _grid_over(m, n, block)


def _numpy_matmul(A, B, C):
    np.matmul(A, B, out=C)


def _serial_matmul(A, B, C):
    if "matmul" not in _jit:
        import numba

        @numba.njit(cache=False)
        def matmul(A, B, C):
            for i in range(C.shape[0]):
                for j in range(C.shape[1]):
                    acc = np.float32(0)
                    for k in range(A.shape[1]):
                        acc += A[i, k] * B[k, j]
                    C[i, j] = acc
        _jit["matmul"] = matmul
    _jit["matmul"](A, B, C)


matmul_naive = Problem(
    "matmul_naive", title="C = A @ B, one thread per element of C on a 2-D grid",
    spec=_matmul_spec, make_inputs=_matmul_inputs, outputs=_matmul_outputs,
    tolerance=_matmul_tolerance, launch=_matmul_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=_matmul_blocks,
    # (M, K, N): the first has K larger than M and N, so a loop over the wrong dimension sums too
    # few terms (a wrong value, not a crash); the hidden ones have K smaller, K = 1 and a row.
    cpu_sizes=Sizes(visible=((19, 37, 27), (5, 3, 7), (1, 1, 1)),
                    hidden=((27, 9, 19), (1, 21, 33)), hidden_random=(2, 1, 40)),
    gpu_sizes=Sizes(visible=((1023, 517, 1537), (19, 37, 27), (5, 3, 7), (1, 1, 1)),
                    hidden=((27, 9, 19), (1, 21, 33)), hidden_random=(3, 1, 1200)),
    bytes_moved=lambda s: 4 * (s[0] * s[1] + s[1] * s[2] + s[0] * s[2]),
    flops=lambda s: 2 * s[0] * s[1] * s[2],
    baselines={"numpy": Baseline(f"NumPy A @ B (BLAS, up to {cores()} cores)", _numpy_matmul),
               "serial": Baseline("numba.njit triple loop (1 core)", _serial_matmul)},
    size_label=lambda s: f"A {s[0]} × {s[1]} times B {s[1]} × {s[2]}",
    value_hint=("C[row, col] is the sum over k of A[row, k] * B[k, col], with k running over "
                "K = A.shape[1] (= B.shape[0]), which is neither C's rows nor its columns."),
)

PROBLEMS = (rgb_to_gray, blur, matmul_naive)
