"""Chapter 7's graded exercises: the 2-D convolution with the filter as an argument, in constant
memory, and tiled with halo cells, and the traffic and time bound of each kernel."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch03 import BLOCK_SHAPES, VISIBLE_BLOCK
from autograder.problems.ch07.references import own_launch_shape, reference_conv2d_tiled
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.images import test_image, to_gray
from autograder.problems.kit.inputs import cores, grid_over, spread

U64 = 2.0 ** -53

# The tiled exercise's blocks: in_tile × in_tile threads, one per element of the input tile. The
# visible check uses 16 × 16; the hidden ones draw 16 × 16 or 32 × 32 (a kernel that hard-codes its
# tile fails), and the speed test uses 32 × 32. (8 × 8 tiles would leave a 5 × 5 filter only
# 4 × 4 outputs per 64 threads, and cost the simulator the most: it pays per block.)
TILE_SHAPES = ((16, 16), (32, 32))
VISIBLE_TILE = (16, 16)
SPEED_TILE = (32, 32)


# ---- the spec ------------------------------------------------------------------------------------

def conv_radius(size) -> int:
    """The filter radius a case of this size uses: 1, 2 or 3 (fixed by the size so a verdict can
    name it). The visible 23 × 37 image gets r = 1, 19 × 24 and 4 × 3 get r = 2."""
    h, w = size
    return 1 + (h + w) % 3


def conv_filter(seed: int, r: int) -> np.ndarray:
    """A (2r + 1) × (2r + 1) float32 filter made from ``seed``: random weights of both signs, with
    a random scale (10^-2 .. 10^2) and a heavier centre, so that a flipped filter (true
    convolution), swapped axes or a wrong radius all give wrong values."""
    rng = np.random.default_rng([7, int(seed), int(r)])
    d = 2 * r + 1
    scale = 10.0 ** rng.uniform(-2, 2)
    weights = rng.uniform(-1.0, 1.0, (d, d))
    weights[r, r] += 2.0
    return (scale * weights).astype(np.float32)


def convolve2d(image: np.ndarray, F: np.ndarray) -> np.ndarray:
    """The exercises' spec in float64: zero-padded correlation of ``image`` with ``F``."""
    image = np.asarray(image, dtype=np.float64)
    F = np.asarray(F, dtype=np.float64)
    r = F.shape[0] // 2
    h, w = image.shape
    padded = np.zeros((h + 2 * r, w + 2 * r))
    padded[r:r + h, r:r + w] = image
    out = np.zeros((h, w))
    for a in range(2 * r + 1):
        for b in range(2 * r + 1):
            out += F[a, b] * padded[a:a + h, b:b + w]
    return out


def conv_tolerance(image: np.ndarray, F: np.ndarray) -> np.ndarray:
    """A float32 dot product of n terms, in any order, fused multiply-adds or not, is within
    γ_n Σ|F[a, b] · image[...]| of the exact one (Higham); here n = (2r + 1)², ghost terms
    included (they are zeros). Plus the smallest normal float32 for results near zero."""
    n = F.shape[0] * F.shape[1]
    return gamma(n) * convolve2d(np.abs(np.asarray(image, np.float64)),
                                 np.abs(np.asarray(F, np.float64))) + TINY32


def sample_conv(image: np.ndarray, F: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The spec and tolerance at flat output indices ``idx`` only (the speed test's samples)."""
    F = np.asarray(F, np.float64)
    r = F.shape[0] // 2
    h, w = image.shape
    rows, cols = np.unravel_index(np.asarray(idx, np.int64), (h, w))
    exp = np.zeros(rows.size)
    mag = np.zeros(rows.size)
    for a in range(2 * r + 1):
        for b in range(2 * r + 1):
            rr, cc = rows + a - r, cols + b - r
            inside = (rr >= 0) & (rr < h) & (cc >= 0) & (cc < w)
            v = np.where(inside, image[np.clip(rr, 0, h - 1), np.clip(cc, 0, w - 1)], 0)
            term = F[a, b] * v.astype(np.float64)
            exp += term
            mag += np.abs(term)
    return exp, gamma(F.size) * mag + TINY32


# ---- inputs --------------------------------------------------------------------------------------

def _image(rng, size):
    """chapter 3's structured test image (edges, a disk, a line, a checkerboard, noise), in gray,
    with a random offset and scale."""
    h, w = size
    return spread(rng, to_gray(test_image(h, w, rng)))


def fast_image(rng: np.random.Generator, size) -> np.ndarray:
    """A large float32 image made in float32 throughout (speed runs: 8191 × 8193 in well under a
    second): noise, a horizontal ramp and a bright rectangle with sharp edges."""
    h, w = size
    img = rng.random((h, w), dtype=np.float32)
    img *= np.float32(0.2)
    img += np.linspace(0.0, 1.0, w, dtype=np.float32)[None, :]
    r0, c0 = int(rng.integers(0, max(h // 2, 1))), int(rng.integers(0, max(w // 2, 1)))
    img[r0:r0 + max(h // 3, 1), c0:c0 + max(w // 4, 1)] += np.float32(1.5)
    return img


def _basic_inputs(rng, size):
    r = conv_radius(size)
    return {"image": _image(rng, size), "F": conv_filter(int(rng.integers(1 << 30)), r),
            "radius": r}


def _seeded_inputs(rng, size):
    return {"image": _image(rng, size), "filter_seed": int(rng.integers(1 << 30)),
            "radius": conv_radius(size)}


def _seeded_speed_inputs(rng, size):
    # The filter is the same for every content set of a speed run (scalars travel once), the
    # image differs.
    return {"image": fast_image(rng, size), "filter_seed": 20240607, "radius": conv_radius(size)}


def _basic_spec(image, F, radius, **launch):
    return {"out": convolve2d(image, F)}


def _seeded_spec(image, filter_seed, radius, **launch):
    return {"out": convolve2d(image, conv_filter(filter_seed, radius))}


def _basic_tolerance(inputs, expected):
    return {"out": conv_tolerance(inputs["image"], inputs["F"])}


def _seeded_tolerance(inputs, expected):
    return {"out": conv_tolerance(inputs["image"],
                                  conv_filter(inputs["filter_seed"], inputs["radius"]))}


def _seeded_sample(inputs, idx):
    exp, tol = sample_conv(inputs["image"], conv_filter(inputs["filter_seed"], inputs["radius"]), idx)
    return {"out": exp}, {"out": tol}


def _outputs(size):
    h, w = size
    return {"out": ((h, w), np.float32)}


def _image_blocks(size, block):
    return grid_over(size[0], size[1], block)


def _tile_blocks(size, block):
    """PMPP's tiled design: each block computes an out_tile × out_tile tile of the output, with
    out_tile = in_tile - 2r."""
    r = conv_radius(size)
    out_tile = block[0] - 2 * r
    return grid_over(size[0], size[1], (out_tile, out_tile))


def _label(size):
    r = conv_radius(size)
    return f"a {size[0]} × {size[1]} image (rows × columns), a {2 * r + 1} × {2 * r + 1} filter (r = {r})"


def _bytes(size):
    return 8 * size[0] * size[1]        # the image read once, the output written once (float32)


def _flops(size):
    return 2 * (2 * conv_radius(size) + 1) ** 2 * size[0] * size[1]


# ---- launches: factories are called once per filter -----------------------------------------------

_made: dict = {}


def made_kernel(factory, key, *args):
    """``factory(*args)``, made once per (factory, key): the kernel a factory returns is compiled
    on its first launch, and a new kernel object would compile again."""
    k = (factory, key)
    if k not in _made:
        if len(_made) > 64:
            _made.clear()
        _made[k] = factory(*args)
    return _made[k]


def _basic_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["image"], inputs["F"], outputs["out"],
                                      int(inputs["radius"]))


def _constant_launch(factory, inputs, outputs, case):
    seed, r = int(inputs["filter_seed"]), int(inputs["radius"])
    kernel = made_kernel(factory, (seed, r), conv_filter(seed, r))
    kernel[case.blocks, case.threads](inputs["image"], outputs["out"])


def _tiled_launch(factory, inputs, outputs, case):
    seed, r = int(inputs["filter_seed"]), int(inputs["radius"])
    in_tile = int(case.threads[0])
    kernel = made_kernel(factory, (seed, r, in_tile), conv_filter(seed, r), in_tile)
    blocks, threads = case.blocks, case.threads
    own = own_launch_shape(factory, *inputs["image"].shape)   # the reference, `aag bench`'s rows
    if own is not None:
        blocks, threads = own
    kernel[blocks, threads](inputs["image"], outputs["out"])


# ---- CPU baselines ---------------------------------------------------------------------------------

def _numpy_conv(image, F, out):
    """Zero padding, then one multiply-add of a shifted view per filter tap, in float32."""
    r = F.shape[0] // 2
    h, w = image.shape
    padded = np.zeros((h + 2 * r, w + 2 * r), np.float32)
    padded[r:r + h, r:r + w] = image
    tmp = np.empty((h, w), np.float32)
    out[...] = 0
    for a in range(2 * r + 1):
        for b in range(2 * r + 1):
            np.multiply(padded[a:a + h, b:b + w], F[a, b], out=tmp)
            out += tmp


@njit_on_first_call
def _serial_conv():
    import numba

    @numba.njit(cache=False)
    def conv(image, F, out):
        h, w = image.shape
        r = F.shape[0] // 2
        for i in range(h):
            for j in range(w):
                acc = np.float32(0)
                for a in range(2 * r + 1):
                    ii = i + a - r
                    if 0 <= ii < h:
                        for b in range(2 * r + 1):
                            jj = j + b - r
                            if 0 <= jj < w:
                                acc += F[a, b] * image[ii, jj]
                out[i, j] = acc
    return conv


@njit_on_first_call
def _parallel_conv():
    import numba

    @numba.njit(parallel=True, cache=False)
    def conv(image, F, out):
        h, w = image.shape
        r = F.shape[0] // 2
        for i in numba.prange(h):
            for j in range(w):
                acc = np.float32(0)
                for a in range(2 * r + 1):
                    ii = i + a - r
                    if 0 <= ii < h:
                        for b in range(2 * r + 1):
                            jj = j + b - r
                            if 0 <= jj < w:
                                acc += F[a, b] * image[ii, jj]
                out[i, j] = acc
    return conv


def _with_filter(run):
    def basic(image, F, radius, out):
        run(image, F, out)

    def seeded(image, filter_seed, radius, out):
        run(image, conv_filter(filter_seed, radius), out)
    return basic, seeded


_NUMPY, _SERIAL, _PARALLEL = (_with_filter(f) for f in (_numpy_conv, _serial_conv, _parallel_conv))
BASIC_BASELINES = {
    "numpy": Baseline("NumPy shifted views (1 core)", _NUMPY[0]),
    "serial": Baseline("numba.njit loop (1 core)", _SERIAL[0]),
    "parallel": Baseline(f"numba.njit parallel ({cores()} cores)", _PARALLEL[0]),
}
SEEDED_BASELINES = {
    "numpy": Baseline("NumPy shifted views (1 core)", _NUMPY[1]),
    "serial": Baseline("numba.njit loop (1 core)", _SERIAL[1]),
    "parallel": Baseline(f"numba.njit parallel ({cores()} cores)", _PARALLEL[1]),
}


# ---- 7.1 the basic kernel: the filter as an argument -------------------------------------------------

def _filter_needed(case) -> dict:
    """Provenance: the filter elements a kernel must read, those whose offset reaches a pixel of
    the image from some output pixel (a 7 × 7 filter over a one-row image uses its middle row)."""
    h, w = case.size
    r = case.inputs["F"].shape[0] // 2
    off = np.abs(np.arange(-r, r + 1))
    return {"F": (off < h)[:, None] & (off < w)[None, :]}


conv2d_basic = Problem(
    "conv2d_basic", title="2-D convolution, one thread per output pixel, the filter as an argument",
    spec=_basic_spec, make_inputs=_basic_inputs, outputs=_outputs, tolerance=_basic_tolerance,
    launch=_basic_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_image_blocks, must_read=_filter_needed,
    # r = 1, 2, 2 (see conv_radius): the 4 × 3 image is smaller than its 5 × 5 filter. Hidden:
    # r = 1 and 3 (a 7 × 7 filter over a one-row image), and two random sizes.
    cpu_sizes=Sizes(visible=((23, 37), (19, 24), (4, 3)), hidden=((37, 23), (1, 31), (53, 67)),
                    hidden_random=(2, 1, 30)),
    gpu_sizes=Sizes(visible=((1080, 1921), (23, 37), (19, 24), (4, 3)), hidden=((37, 23), (1, 31)),
                    hidden_random=(3, 1, 2000)),
    bytes_moved=_bytes, flops=_flops, baselines=BASIC_BASELINES, size_label=_label,
    value_hint=("out[i, j] = Σ F[a, b] · image[i + a - r, j + b - r] over a, b in 0 .. 2r, and a "
                "term whose image pixel lies outside the image counts as 0. Wrong only near the "
                "edges? Check both ends of the ghost-cell test (>= 0 and < the size). Wrong "
                "everywhere? F[a, b] pairs a with the row offset and b with the column; the filter "
                "is not flipped."),
)


# ---- 7.2 the filter in constant memory: a kernel factory -------------------------------------------

conv2d_constant = Problem(
    "conv2d_constant", title="2-D convolution with the filter in constant memory (a kernel factory)",
    spec=_seeded_spec, make_inputs=_seeded_inputs, outputs=_outputs, tolerance=_seeded_tolerance,
    launch=_constant_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_image_blocks,
    cpu_sizes=conv2d_basic.cpu_sizes, gpu_sizes=conv2d_basic.gpu_sizes,
    bytes_moved=_bytes, flops=_flops, baselines=SEEDED_BASELINES, size_label=_label,
    value_hint=("every case has its own filter: the kernel must use the F given to "
                "make_conv2d_constant (its radius is F.shape[0] // 2), not a filter from another "
                "cell. Otherwise as in exercise 7.1: zero ghost cells, F[a, b] with a the row "
                "offset, not flipped."),
)


# ---- 7.3 tiled with halo cells -------------------------------------------------------------------------

conv2d_tiled = Problem(
    "conv2d_tiled", title="Tiled 2-D convolution: an input tile with halo cells in shared memory",
    spec=_seeded_spec, make_inputs=_seeded_inputs, outputs=_outputs, tolerance=_seeded_tolerance,
    launch=_tiled_launch, block_sizes=TILE_SHAPES, visible_block_size=VISIBLE_TILE,
    blocks_for=_tile_blocks,
    # As 7.1, but the hidden random sides stay below 26: with 32 × 32 tiles one block then covers
    # each side, and the simulator pays per thread (a 1024-thread block takes about 0.7 s). The
    # fixed 57 × 60 (r = 1) is 4 times the largest visible image in 2 × 2 blocks of 32 × 32.
    cpu_sizes=Sizes(visible=((23, 37), (19, 24), (4, 3)), hidden=((37, 23), (1, 31), (57, 60)),
                    hidden_random=(2, 1, 26)),
    gpu_sizes=Sizes(visible=((1080, 1921), (23, 37), (19, 24), (4, 3)), hidden=((37, 23), (1, 31)),
                    hidden_random=(3, 1, 2000), speed=(8191, 8193)),
    bytes_moved=_bytes, flops=_flops, baselines=SEEDED_BASELINES, size_label=_label,
    reference=reference_conv2d_tiled, speed_inputs=_seeded_speed_inputs, sample_spec=_seeded_sample,
    speed_launch=lambda size: (_tile_blocks(size, SPEED_TILE), SPEED_TILE),
    # On the H200 (docs/benchmarks.md) the reference (8 rows x 2 columns per thread, straight-line
    # code for the filter) took 0.183-0.184 ms and the chapter's solution, PMPP's design, 0.809-
    # 0.810 ms (0.226-0.227 of it in three runs of the judge's speed test): that design idles the
    # halo threads and reads (2r + 1)² values from shared memory per output, where the reference
    # loads 4.5 per output through L1. The bar asks for PMPP's design done right, with room for
    # noise; NumPy on one core took 2.2-2.5 s.
    speed=SpeedBar(min_fraction_of_reference=0.15, baseline="numpy", min_speedup=100.0),
    value_hint=("if only some outputs are wrong, look at the tile edges: the input tile starts r "
                "rows and r columns before the output tile (blockIdx · out_tile - r), a thread whose "
                "input pixel is outside the image stores 0 (a ghost cell), and only threads with "
                "r <= ty, tx < r + out_tile compute, from tile[ty - r + a, tx - r + b]. If the radius-1 "
                "case passes and the radius-2 one fails, is a halo of 1 hard-coded somewhere?"),
)


# ---- 7.4 predict: what each kernel must move, and the time that costs ----------------------------------

def conv_bytes(h, w, r, in_tile):
    """Global-memory bytes each kernel moves if no load is ever served by a cache (float32; the
    image taken as large as the tiles need): (basic, constant, tiled, ideal)."""
    taps = (2 * r + 1) ** 2
    px = h * w
    out_tile = in_tile - 2 * r
    return (4.0 * px * (2 * taps + 1), 4.0 * px * (taps + 1),
            4.0 * px * (in_tile ** 2 / out_tile ** 2 + 1), 8.0 * px)


def _bounds_spec(height, width, radius, in_tile, peak_flops, bandwidth):
    flops = 2.0 * (2 * radius + 1) ** 2 * height * width
    names = ("basic", "constant", "tiled", "ideal")
    traffic = conv_bytes(height, width, radius, in_tile)
    return {k: np.maximum(flops / peak_flops, q / bandwidth) for k, q in zip(names, traffic)}


def _bounds_inputs(rng, count):
    h, w = (rng.integers(1, 16385, count).astype(np.float64) for _ in range(2))
    r = rng.integers(1, 8, count).astype(np.float64)
    tile = np.where(r >= 4, rng.choice([16, 32], count), rng.choice([8, 16, 32], count))
    tile = tile.astype(np.float64)
    peak = 10.0 ** rng.uniform(11, 14.5, count)          # 0.1 to 300 TFLOP/s
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)     # 30 GB/s to 10 TB/s
    # The first cases: the chapter's H200-like device (67 TFLOP/s, 4.8 TB/s) on the speed test's
    # 8191 × 8193 image, r = 2 with 32 × 32 tiles, r = 1 with 16 × 16, r = 7 with 32 × 32 (compute
    # bound when nothing is repeated); then a one-pixel image.
    h[:4], w[:4] = [8191, 8191, 8191, 1], [8193, 8193, 8193, 1]
    r[:4], tile[:4] = [2, 1, 7, 1], [32, 16, 32, 8]
    peak[:4], bandwidth[:4] = 67e12, 4.8e12
    return {"height": h, "width": w, "radius": r, "in_tile": tile, "peak_flops": peak,
            "bandwidth": bandwidth}


def _bounds_tolerance(inputs, expected):
    # A handful of float64 roundings in any order of evaluation: 64 u relative is generous.
    return {k: 64 * U64 * v for k, v in expected.items()}


def _bounds_call(fn, inputs, outputs, case):
    for i in range(case.size):
        got = fn(int(inputs["height"][i]), int(inputs["width"][i]), int(inputs["radius"][i]),
                 int(inputs["in_tile"][i]), float(inputs["peak_flops"][i]),
                 float(inputs["bandwidth"][i]))
        basic, constant, tiled, ideal = got
        outputs["basic"][i], outputs["constant"][i] = basic, constant
        outputs["tiled"][i], outputs["ideal"][i] = tiled, ideal


conv_time_bounds = Problem(
    "conv_time_bounds", title="Predict: the traffic and time bound of each convolution kernel",
    spec=_bounds_spec, make_inputs=_bounds_inputs,
    outputs=lambda count: {k: ((count,), np.float64) for k in ("basic", "constant", "tiled", "ideal")},
    tolerance=_bounds_tolerance, launch=_bounds_call, on_device=False,
    cpu_sizes=Sizes(visible=(8,), hidden=(200,)), gpu_sizes=Sizes(visible=(8,), hidden=(200,)),
    value_hint=("each bound is the larger of two times: 2·(2r + 1)²·H·W FLOPs at the peak rate, "
                "and the kernel's bytes at the bandwidth. Bytes per output pixel, float32: basic "
                "4·(2·(2r + 1)² + 1) (an image value and a filter value per tap, one store), "
                "constant 4·((2r + 1)² + 1), tiled 4·(in_tile² / out_tile² + 1) with out_tile = "
                "in_tile - 2r, ideal 8 (read once, write once)."),
)
