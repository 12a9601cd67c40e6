"""Chapter 3 (PMPP ch. 3, Multidimensional grids and data): kernels on 2-D grids over row-major
arrays: an RGB image to gray, a box blur, and a naive matrix multiplication.

Sizes are shapes (see :class:`autograder.problem.Case`): an image's ``(height, width)`` or a
matmul's ``(M, K, N)``. The learner writes only the kernel; the problem launches it with 2-D blocks
of ``case.threads = (x, y)`` threads and a grid of ``case.blocks = (ceil(cols / x), ceil(rows / y))``
blocks, so x runs along a row (columns) and y down the image (rows).
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, U32, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.common import cores, random_floats, random_floats_fast

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


# ---- speed tests: sizes, launch shape, inputs, the course's reference kernels --------------------

# A 4097 × 8191 image: 134 MB per float32 plane, far beyond the L2 cache; sides not multiples of
# any block. Speed runs launch 32 × 8 blocks: a warp spans 32 consecutive pixels of a row.
SPEED_IMAGE = (4097, 8191)
SPEED_BLOCK = (32, 8)
SPEED_MATMUL = (4096, 4096, 4096)


def _speed_launch_image(size):
    return _grid_over(size[0], size[1], SPEED_BLOCK), SPEED_BLOCK


def _unravel(idx, shape):
    return np.unravel_index(np.asarray(idx, dtype=np.int64), shape)


_reference = {}


def _compiled(name, make):
    if name not in _reference:
        _reference[name] = make()
    return _reference[name]


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


def _gray_speed_inputs(rng, size):
    h, w = size
    return {"image": random_floats_fast(rng, h * w * 3).reshape(h, w, 3)}


def _gray_sample(inputs, idx):
    h, w, _ = inputs["image"].shape
    pixels = inputs["image"].reshape(h * w, 3)[idx].astype(np.float64)
    expected = {"gray": to_gray(pixels)}
    mag = sum(abs(wt) * np.abs(pixels[:, k]) for k, wt in enumerate(GRAY_WEIGHTS))
    return expected, {"gray": gamma(4) * mag + TINY32}


def reference_gray():
    def make():
        global cuda, float32    # module globals: the CUDA simulator swaps `cuda` only there
        from numba import cuda, float32

        @cuda.jit
        def rgb_to_gray_reference(image, gray):
            col, row = cuda.grid(2)
            if row < gray.shape[0] and col < gray.shape[1]:
                gray[row, col] = (float32(0.299) * image[row, col, 0]
                                  + float32(0.587) * image[row, col, 1]
                                  + float32(0.114) * image[row, col, 2])
        return rgb_to_gray_reference
    return _compiled("gray", make)


def _cupy_gray():
    import cupy as cp
    weights = cp.asarray(np.asarray(GRAY_WEIGHTS, np.float32))

    def run(inputs, outputs):
        cp.matmul(cp.asarray(inputs["image"]), weights, out=cp.asarray(outputs["gray"]))
    return run


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
    speed_launch=_speed_launch_image, vendor=_cupy_gray, vendor_label="CuPy image @ weights",
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


def _blur_speed_inputs(rng, size):
    h, w = size
    return {"image": random_floats_fast(rng, h * w).reshape(h, w), "radius": blur_radius(size)}


def _blur_sample(inputs, idx):
    image, radius = inputs["image"], int(inputs["radius"])
    h, w = image.shape
    rows, cols = _unravel(idx, (h, w))
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


def reference_blur():
    def make():
        global cuda, float32    # module globals: the CUDA simulator swaps `cuda` only there
        from numba import cuda, float32

        @cuda.jit
        def blur_reference(image, out, radius):
            col, row = cuda.grid(2)
            h, w = image.shape
            if row < h and col < w:
                r0, r1 = max(row - radius, 0), min(row + radius + 1, h)
                c0, c1 = max(col - radius, 0), min(col + radius + 1, w)
                total = float32(0)
                for r in range(r0, r1):
                    for c in range(c0, c1):
                        total += image[r, c]
                out[row, col] = total / float32((r1 - r0) * (c1 - c0))
        return blur_reference
    return _compiled("blur", make)


class _ByRadius:
    """A launchable that compiles one kernel per radius (the radius a compile-time constant).
    ``grid(image_shape) -> (blocks, threads)``, if given, replaces the launch's own shape (for
    kernels where a thread handles several pixels)."""

    def __init__(self, make, grid=None):
        self.make, self.grid, self.kernels = make, grid, {}

    def __getitem__(self, config):
        def launch(image, out, radius):
            radius = int(radius)
            if radius not in self.kernels:
                self.kernels[radius] = self.make(radius)
            shape = self.grid(image.shape) if self.grid else config
            self.kernels[radius][shape](image, out, radius)
        return launch


def blur_fixed_radius():
    """For `aag bench`: the blur with the radius fixed when the kernel is compiled, so that the
    window loops are unrolled, and no clamping for pixels whose window lies inside the image."""
    def make(R):
        global cuda, float32    # module globals: the CUDA simulator swaps `cuda` only there
        from numba import cuda, float32
        D = 2 * R + 1
        INV = 1.0 / (D * D)

        @cuda.jit
        def blur_unrolled(image, out, radius):
            col, row = cuda.grid(2)
            h, w = image.shape
            if row < h and col < w:
                total = float32(0)
                if R <= row < h - R and R <= col < w - R:
                    for dr in range(D):
                        for dc in range(D):
                            total += image[row - R + dr, col - R + dc]
                    out[row, col] = total * float32(INV)
                else:
                    r0, r1 = max(row - R, 0), min(row + R + 1, h)
                    c0, c1 = max(col - R, 0), min(col + R + 1, w)
                    for r in range(r0, r1):
                        for c in range(c0, c1):
                            total += image[r, c]
                    out[row, col] = total / float32((r1 - r0) * (c1 - c0))
        return blur_unrolled
    return _compiled("blur_fixed", lambda: _ByRadius(make))


def blur_sliding_rows(rows: int = 8):
    """For `aag bench`: each thread blurs `rows` pixels down one column. It sums each of the
    rows + 2r input rows across the window once (2r + 1 loads), then every output is the sum of
    2r + 1 of those row sums: about (rows + 2r)(2r + 1) / rows loads per pixel instead of
    (2r + 1)². Pixels whose window leaves the image take the plain path."""
    def make(R):
        global cuda, float32    # module globals: the CUDA simulator swaps `cuda` only there
        from numba import cuda, float32
        D, NR = 2 * R + 1, rows + 2 * R
        INV = 1.0 / (D * D)

        @cuda.jit
        def blur_sliding(image, out, radius):
            col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * rows
            h, w = image.shape
            if col >= w or row0 >= h:
                return
            if R <= row0 and row0 + rows + R <= h and R <= col < w - R:
                sums = cuda.local.array(NR, float32)
                for i in range(NR):
                    s = float32(0)
                    for dc in range(D):
                        s += image[row0 - R + i, col - R + dc]
                    sums[i] = s
                for j in range(rows):
                    s = float32(0)
                    for i in range(D):
                        s += sums[j + i]
                    out[row0 + j, col] = s * float32(INV)
            else:
                for j in range(rows):
                    row = row0 + j
                    if row < h:
                        r0, r1 = max(row - R, 0), min(row + R + 1, h)
                        c0, c1 = max(col - R, 0), min(col + R + 1, w)
                        total = float32(0)
                        for r in range(r0, r1):
                            for c in range(c0, c1):
                                total += image[r, c]
                        out[row, col] = total / float32((r1 - r0) * (c1 - c0))
        return blur_sliding

    def grid(shape):     # 32 × 8 threads, each `rows` pixels down a column
        h, w = shape
        return ((w + 31) // 32, ((h + rows - 1) // rows + 7) // 8), (32, 8)
    return _compiled(f"blur_sliding_{rows}", lambda: _ByRadius(make, grid))


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


def _matmul_speed_inputs(rng, size):
    m, k, n = size
    return {"A": random_floats_fast(rng, m * k).reshape(m, k),
            "B": random_floats_fast(rng, k * n).reshape(k, n)}


def _matmul_sample(inputs, idx):
    A, B = inputs["A"], inputs["B"]
    rows, cols = _unravel(idx, (A.shape[0], B.shape[1]))
    a, b = A[rows].astype(np.float64), B[:, cols].T.astype(np.float64)
    return ({"C": np.einsum("ik,ik->i", a, b)},
            {"C": gamma(A.shape[1]) * np.einsum("ik,ik->i", np.abs(a), np.abs(b)) + TINY32})


def reference_matmul_naive():
    def make():
        global cuda, float32    # module globals: the CUDA simulator swaps `cuda` only there
        from numba import cuda, float32

        @cuda.jit
        def matmul_naive_reference(A, B, C):
            col, row = cuda.grid(2)
            if row < C.shape[0] and col < C.shape[1]:
                acc = float32(0)
                for k in range(A.shape[1]):
                    acc += A[row, k] * B[k, col]
                C[row, col] = acc
        return matmul_naive_reference
    return _compiled("matmul_naive", make)


def cupy_matmul():
    import cupy as cp

    def run(inputs, outputs):
        cp.matmul(cp.asarray(inputs["A"]), cp.asarray(inputs["B"]), out=cp.asarray(outputs["C"]))
    return run


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
                    hidden=((27, 9, 19), (1, 21, 33), (41, 53, 37)), hidden_random=(2, 1, 40)),
    gpu_sizes=Sizes(visible=((1023, 517, 1537), (19, 37, 27), (5, 3, 7), (1, 1, 1)),
                    hidden=((27, 9, 19), (1, 21, 33)), hidden_random=(3, 1, 1200),
                    speed=SPEED_MATMUL),
    bytes_moved=lambda s: 4 * (s[0] * s[1] + s[1] * s[2] + s[0] * s[2]),
    flops=lambda s: 2 * s[0] * s[1] * s[2],
    baselines={"numpy": Baseline(f"NumPy A @ B (BLAS, up to {cores()} cores)", _numpy_matmul),
               "serial": Baseline("numba.njit triple loop (1 core)", _serial_matmul,
                                  at_speed_size=False)},
    size_label=lambda s: f"A {s[0]} × {s[1]} times B {s[1]} × {s[2]}",
    # No speed cell (this kernel is the slow first version), but `aag bench` times the reference
    # at 4096³ next to cuBLAS: the gap chapters 5 and 6 close.
    reference=reference_matmul_naive, speed_inputs=_matmul_speed_inputs,
    sample_spec=_matmul_sample, speed_launch=lambda s: (_grid_over(s[0], s[2], (16, 16)), (16, 16)),
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


def _image_bound_call(fn, inputs, outputs, case):
    for i in range(case.size):
        outputs["seconds"][i] = fn(int(inputs["height"][i]), int(inputs["width"][i]),
                                   int(inputs["bytes_in"][i]), int(inputs["bytes_out"][i]),
                                   float(inputs["bandwidth"][i]))


image_time_bound = Problem(
    "image_time_bound", title="The least time a one-pass image kernel can take",
    spec=_image_bound_spec, make_inputs=_image_bound_inputs,
    outputs=lambda count: {"seconds": ((count,), np.float64)},
    # Three float64 roundings in any order: 16 u relative is generous and still exact enough
    # that a number rounded by hand fails.
    tolerance=lambda inputs, expected: {"seconds": 16 * 2.0 ** -53 * expected["seconds"]},
    launch=_image_bound_call, on_device=False,
    cpu_sizes=Sizes(visible=(6,), hidden=(200,)), gpu_sizes=Sizes(visible=(6,), hidden=(200,)),
    value_hint=("every pixel is read once (bytes_in) and written once (bytes_out), and nothing "
                "moves faster than the bandwidth: height · width · (bytes_in + bytes_out) / "
                "bandwidth seconds."),
)

PROBLEMS = (rgb_to_gray, blur, matmul_naive, image_time_bound)

# Other kernels `aag bench` times beside an exercise's reference, with the same launch and inputs.
BENCH_VARIANTS = {"blur": {"radius fixed at compile time (unrolled)": blur_fixed_radius,
                            "radius fixed, 8 rows per thread with row sums": blur_sliding_rows}}
