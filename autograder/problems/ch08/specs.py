"""Chapter 8's graded exercises (the spec, inputs, tolerance and launch shapes shared by the
three stencils, their CPU baselines and verdicts, and the arithmetic-intensity formula); see the
package's docstring for the spec and the tolerance."""

from __future__ import annotations

import numpy as np

from autograder.core.checks import GENERIC_VALUE_HINT, TINY32, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch08.references import (IN_TILE, OUT_TILE, PLANE_OUT, PLANE_TILE,
                                                 reference_basic, reference_coarsened,
                                                 reference_tiled, variant_launch)
from autograder.problems.kit import (cores, formula_problem, njit_on_first_call,
                                     random_floats_fast, spread, unravel)

COEFFICIENTS = ("c0", "c1", "c2", "c3", "c4", "c5", "c6")
FLOPS_PER_POINT = 13          # 7 multiplies and 6 additions per interior point

# 8.1: the block shapes (x, y, z) the hidden tests draw from; the visible check uses 8 × 4 × 2
# (no two sides equal, so a kernel that mixes up the axes fails at once).
BLOCK_SHAPES = ((8, 4, 2), (4, 8, 2), (2, 4, 8), (16, 2, 2), (4, 4, 4), (32, 2, 1))
VISIBLE_BLOCK = (8, 4, 2)
# 8.3 and 8.4: the tile sizes (IN_TILE, OUT_TILE, PLANE_TILE, PLANE_OUT) are the reference
# kernels' (references.py).

# Speed runs: a 511 × 513 × 515 volume (540 MB per float32 copy, ten times the L2 cache), sides
# not multiples of any tile. Basic kernels go in 32 × 8 × 1 blocks: a warp reads 32 consecutive
# x. The speed inputs' coefficients are fixed: the harness launches every timed call with the
# scalars of its first input set.
SPEED_VOLUME = (511, 513, 515)
SPEED_BASIC_BLOCK = (32, 8, 1)
SPEED_COEFFICIENTS = (0.52, 0.071, 0.093, 0.084, 0.066, 0.097, 0.069)
U64 = 2.0 ** -53


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


# ---- a test volume with real structure ---------------------------------------------------------

def test_volume(nz: int, ny: int, nx: int, seed: int | np.random.Generator = 0) -> np.ndarray:
    """An nz × ny × nx float32 volume with something for every bug to hit: a smooth field with a
    different slope and curvature along each axis (so swapped axes or coefficients change the
    result), a box with sharp faces, a ball, a one-voxel-thin sheet, a patch of alternating
    voxels (every neighbour differs), and noise. Seeded, no downloads."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    z, y, x = np.ogrid[0:nz, 0:ny, 0:nx]
    w, v, u = (a.astype(np.float64) / max(n - 1, 1) for a, n in ((z, nz), (y, ny), (x, nx)))
    vol = (0.2 + 0.5 * u - 0.3 * v + 0.4 * w + 0.3 * u * u - 0.2 * v * v + 0.25 * w * w * w
           + 0.1 * np.sin(5.0 * u + 2.0) * np.cos(3.0 * v) * np.ones_like(w))
    # A box with sharp faces, in the lower half of each axis.
    lo = [int(rng.integers(0, max(n // 2, 1))) for n in (nz, ny, nx)]
    side = [max(n // 3, 1) for n in (nz, ny, nx)]
    box = ((z >= lo[0]) & (z < lo[0] + side[0]) & (y >= lo[1]) & (y < lo[1] + side[1])
           & (x >= lo[2]) & (x < lo[2] + side[2]))
    vol = np.where(box, vol + 0.8, vol)
    # A ball in the upper half.
    centre = [rng.uniform(0.5, 0.9) * n for n in (nz, ny, nx)]
    radius = max(min(nz, ny, nx) / 4, 1.0)
    ball = (z - centre[0]) ** 2 + (y - centre[1]) ** 2 + (x - centre[2]) ** 2 <= radius ** 2
    vol = np.where(ball, -0.5, vol)
    # A one-voxel sheet: one z plane over part of y.
    sheet = (z == int(rng.integers(0, nz))) & (y < max(2 * ny // 3, 1))
    vol = np.where(sheet, vol + 0.6, vol)
    # Alternating voxels in one corner: every neighbour of such a voxel differs from it.
    corner = (z >= nz // 2) & (y < ny // 2 + 1) & (x >= nx // 2)
    vol = np.where(corner & ((z + y + x) % 2 == 0), vol - 0.3, vol)
    vol = vol + rng.normal(0.0, 0.03, vol.shape)
    return vol.astype(np.float32)


def _coefficients(rng: np.random.Generator) -> tuple[np.float32, ...]:
    """Seven distinct coefficients with random signs and sizes: any two swapped change the result."""
    while True:
        mags = rng.uniform(0.05, 1.0, 7)
        if np.min(np.diff(np.sort(mags))) > 0.02:
            break
    signs = rng.choice([-1.0, 1.0], 7)
    return tuple(np.float32(s * m) for s, m in zip(signs, mags))


# ---- the spec, in float64 ----------------------------------------------------------------------

def stencil7(inp: np.ndarray, c) -> np.ndarray:
    """The seven-point stencil in float64: interior points weighted, boundary points copied."""
    x = np.asarray(inp, dtype=np.float64)
    c = [float(v) for v in c]
    out = x.copy()
    if min(x.shape) >= 3:
        out[1:-1, 1:-1, 1:-1] = (c[0] * x[1:-1, 1:-1, 1:-1]
                                 + c[1] * x[1:-1, 1:-1, :-2] + c[2] * x[1:-1, 1:-1, 2:]
                                 + c[3] * x[1:-1, :-2, 1:-1] + c[4] * x[1:-1, 2:, 1:-1]
                                 + c[5] * x[:-2, 1:-1, 1:-1] + c[6] * x[2:, 1:-1, 1:-1])
    return out


def _coefs(inputs) -> list[float]:
    return [float(inputs[name]) for name in COEFFICIENTS]


def _magnitude(inp: np.ndarray, c) -> np.ndarray:
    """sum_m |c_m x_m| at every interior point (0 on the boundary)."""
    mag = stencil7(np.abs(np.asarray(inp, dtype=np.float64)), [abs(v) for v in c])
    return mag * interior_mask(inp.shape)


def interior_mask(shape) -> np.ndarray:
    """True where a point has no index 0 or N - 1 on any axis."""
    mask = np.zeros(shape, dtype=bool)
    if min(shape) >= 3:
        mask[1:-1, 1:-1, 1:-1] = True
    return mask


def _inputs(rng, size):
    nz, ny, nx = size
    inputs = {"inp": spread(rng, test_volume(nz, ny, nx, rng))}
    inputs.update(zip(COEFFICIENTS, _coefficients(rng)))
    return inputs


def _speed_inputs(rng, size):
    inputs = {"inp": random_floats_fast(rng, int(np.prod(size))).reshape(size)}
    inputs.update((name, np.float32(v)) for name, v in zip(COEFFICIENTS, SPEED_COEFFICIENTS))
    return inputs


def _spec(inp, c0, c1, c2, c3, c4, c5, c6, **launch):
    return {"out": stencil7(inp, (c0, c1, c2, c3, c4, c5, c6))}


def _tolerance(inputs, expected):
    # Interior: gamma_7 sum |c_m x_m| (a 7-term dot product in float32, any order, FMA or not),
    # plus the smallest normal float32 for results in the subnormal range. Boundary: exact.
    inp = inputs["inp"]
    if expected["out"].shape != inp.shape:          # a sample: bound every point by the worst
        bound = gamma(7) * sum(abs(v) for v in _coefs(inputs)) * float(np.max(np.abs(inp)))
        return {"out": np.full(expected["out"].shape, bound + TINY32)}
    mag = _magnitude(inp, _coefs(inputs))
    return {"out": np.where(interior_mask(inp.shape), gamma(7) * mag + TINY32, 0.0)}


def _sample(inputs, idx):
    """Expected values and tolerances at flat output indices ``idx`` only (speed runs)."""
    inp = inputs["inp"]
    nz, ny, nx = inp.shape
    i, j, k = unravel(idx, inp.shape)
    centre = inp[i, j, k].astype(np.float64)
    inside = (i > 0) & (i < nz - 1) & (j > 0) & (j < ny - 1) & (k > 0) & (k < nx - 1)
    ii, jj, kk = i[inside], j[inside], k[inside]
    terms = [inp[ii, jj, kk], inp[ii, jj, kk - 1], inp[ii, jj, kk + 1], inp[ii, jj - 1, kk],
             inp[ii, jj + 1, kk], inp[ii - 1, jj, kk], inp[ii + 1, jj, kk]]
    c = _coefs(inputs)
    expected, tol = centre.copy(), np.zeros(centre.shape)
    expected[inside] = sum(cm * t.astype(np.float64) for cm, t in zip(c, terms))
    mag = sum(abs(cm) * np.abs(t.astype(np.float64)) for cm, t in zip(c, terms))
    tol[inside] = gamma(7) * mag + TINY32
    return {"out": expected}, {"out": tol}


def _outputs(size):
    return {"out": (tuple(size), np.float32)}


def _launch(kernel, inputs, outputs, case):
    # A bench variant of references.py has a launch of its own (found by the kernel's identity);
    # every other kernel, the learners' among them, gets the case's.
    blocks, threads = (variant_launch(kernel, inputs["inp"].shape)
                       or (case.blocks, case.threads))
    kernel[blocks, threads](inputs["inp"], outputs["out"],
                            *(inputs[name] for name in COEFFICIENTS))


def _bytes(size):
    return 8 * int(np.prod(size))          # read the volume once, write it once


def _flops(size):
    return FLOPS_PER_POINT * int(np.prod([max(s - 2, 0) for s in size]))


def _label(size):
    nz, ny, nx = size
    return f"a {nz} × {ny} × {nx} volume (z × y × x)"


# ---- launch shapes -----------------------------------------------------------------------------

def basic_blocks(size, block):
    """One thread per point: blocks (x, y, z) covering nx, ny, nz."""
    nz, ny, nx = size
    bx, by, bz = block
    return (_cdiv(nx, bx), _cdiv(ny, by), _cdiv(nz, bz))


def tiled_blocks(size, block=(IN_TILE, IN_TILE, IN_TILE)):
    """One block per OUT_TILE³ box of outputs."""
    nz, ny, nx = size
    return (_cdiv(nx, OUT_TILE), _cdiv(ny, OUT_TILE), _cdiv(nz, OUT_TILE))


def slabs(nz: int) -> int:
    """How many z slabs the coarsened kernel's grid has: slabs of 3 planes on small volumes (so
    that the checks cross slab seams), of up to 32 planes on large ones."""
    per = max(3, min(32, nz // 16))
    return _cdiv(nz, per)


def slab_range(nz: int, count: int, index: int) -> tuple[int, int]:
    """The planes [start, stop) of slab ``index`` of ``count``: ceil(nz / count) planes each, the
    last one shorter (or empty)."""
    per = _cdiv(nz, count)
    return min(index * per, nz), min((index + 1) * per, nz)


def coarsened_blocks(size, block=(PLANE_TILE, PLANE_TILE)):
    """One block per PLANE_OUT × PLANE_OUT column of outputs and per z slab."""
    nz, ny, nx = size
    return (_cdiv(nx, PLANE_OUT), _cdiv(ny, PLANE_OUT), slabs(nz))


# ---- CPU baselines -----------------------------------------------------------------------------

def _numpy_stencil(inp, out, c0, c1, c2, c3, c4, c5, c6):
    out[...] = inp
    if min(inp.shape) < 3:
        return
    x, o = inp, out[1:-1, 1:-1, 1:-1]
    np.multiply(x[1:-1, 1:-1, 1:-1], c0, out=o)
    for c, view in ((c1, x[1:-1, 1:-1, :-2]), (c2, x[1:-1, 1:-1, 2:]), (c3, x[1:-1, :-2, 1:-1]),
                    (c4, x[1:-1, 2:, 1:-1]), (c5, x[:-2, 1:-1, 1:-1]), (c6, x[2:, 1:-1, 1:-1])):
        o += c * view


def _njit_stencil(parallel: bool):
    import numba

    @numba.njit(parallel=parallel, cache=False)
    def stencil(inp, out, c0, c1, c2, c3, c4, c5, c6):
        nz, ny, nx = inp.shape
        for i in numba.prange(nz):
            for j in range(ny):
                for k in range(nx):
                    if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
                        out[i, j, k] = inp[i, j, k]
                    else:
                        out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, k - 1]
                                        + c2 * inp[i, j, k + 1] + c3 * inp[i, j - 1, k]
                                        + c4 * inp[i, j + 1, k] + c5 * inp[i - 1, j, k]
                                        + c6 * inp[i + 1, j, k])
    return stencil


@njit_on_first_call
def _serial_loops():
    return _njit_stencil(False)


@njit_on_first_call
def _parallel_loops():
    return _njit_stencil(True)


# Baseline.run is called with keywords: plain functions around the compiled loops.
def _serial_stencil(inp, out, c0, c1, c2, c3, c4, c5, c6):
    _serial_loops(inp, out, c0, c1, c2, c3, c4, c5, c6)


def _parallel_stencil(inp, out, c0, c1, c2, c3, c4, c5, c6):
    _parallel_loops(inp, out, c0, c1, c2, c3, c4, c5, c6)


BASELINES = {
    "numpy": Baseline("NumPy slices (1 core)", _numpy_stencil),
    "serial": Baseline("numba.njit loops (1 core)", _serial_stencil),
    "parallel": Baseline(f"numba.njit parallel ({cores()} cores)", _parallel_stencil),
}


# ---- verdicts that say where in the volume things went wrong ----------------------------------

_SWAPS = (
    ((1, 2), "c1 and c2 are swapped: c1 multiplies in[i, j, k-1] (the x neighbour before) and c2 "
             "in[i, j, k+1] (the one after)"),
    ((3, 4), "c3 and c4 are swapped: c3 multiplies in[i, j-1, k] and c4 in[i, j+1, k]"),
    ((5, 6), "c5 and c6 are swapped: c5 multiplies in[i-1, j, k] and c6 in[i+1, j, k]"),
)
_AXES = (
    ((1, 2, 5, 6), "the x and z neighbours are swapped: k (the last index, x) pairs with c1 and c2, "
                   "i (the first index, z) with c5 and c6"),
    ((1, 2, 3, 4), "the x and y neighbours are swapped: k (the last index, x) pairs with c1 and c2, "
                   "j (the middle index, y) with c3 and c4"),
    ((3, 4, 5, 6), "the y and z neighbours are swapped: j (the middle index) pairs with c3 and "
                   "c4, i (the first index) with c5 and c6"),
)


def _permuted(c, pairs):
    c = list(c)
    if len(pairs) == 2:
        a, b = pairs
        c[a], c[b] = c[b], c[a]
    else:                      # swap two axes: (a, b) with (d, e)
        a, b, d, e = pairs
        c[a], c[b], c[d], c[e] = c[d], c[e], c[a], c[b]
    return c


_OUT_OF_BOUNDS_HINT = {
    "basic": ("a thread read or wrote outside the volume. The grid has more threads than points "
              "along each axis: guard all three indices (`if i < nz and j < ny and k < nx:`), and "
              "only read the six neighbours of interior points (a boundary point copies)."),
    "tiled": ("a thread read or wrote outside an array. Load a tile point only where it is inside "
              "the volume (0 ≤ i < nz, 0 ≤ j < ny, 0 ≤ k < nx: halo points can lie outside), "
              "compute only in threads 1 .. IN_TILE - 2 of each axis (the others have no "
              "neighbour in the tile), and store only points inside the volume."),
    "coarsened": ("a thread read or wrote outside an array. The last slab can be shorter than the "
                  "others (stop = min(start + per, nz)); the plane above the last one of the "
                  "volume does not exist; halo threads (x or y = 0 or PLANE_TILE - 1) may lie "
                  "outside the volume and only load where they are inside; and only threads 1 .. "
                  "PLANE_TILE - 2 compute."),
}


class StencilProblem(Problem):
    """A stencil exercise: its verdicts say which points are wrong in terms of the volume (the
    boundary, a tile's edge, a slab's first plane), and name the neighbours of the first one."""

    def __init__(self, *args, layout: str = "basic", **kwargs):
        super().__init__(*args, **kwargs)
        self.layout = layout          # "basic", "tiled" or "coarsened": what a seam means

    def simulated_threads(self, case) -> float:
        """A z-marching block (``coarsened``) walks a slab of planes, and a right but slow kernel
        may walk the whole column in every block: allow every thread all ``nz`` planes."""
        if self.layout != "coarsened":
            return super().simulated_threads(case)
        return case.thread_count * max(int(case.size[0]), 1)

    def judge(self, case, outcome, show_inputs=True):
        verdict = super().judge(case, outcome, show_inputs)
        if verdict.passed:
            return verdict
        if outcome.error:
            if "out of bounds" in outcome.error:
                verdict.hint = _OUT_OF_BOUNDS_HINT[self.layout]
            return verdict
        if "out" not in outcome.outputs:
            return verdict
        got = np.asarray(outcome.outputs["out"])
        inp = case.inputs["inp"]
        if got.shape != inp.shape:
            return verdict
        hint = self._diagnose(case, got)
        if hint and (verdict.hint in (GENERIC_VALUE_HINT, self.value_hint)
                     or "never written" in verdict.message):
            verdict.hint = hint
        if verdict.index is not None and show_inputs:
            i, j, k = (int(v) for v in np.unravel_index(verdict.index, inp.shape))
            nz, ny, nx = inp.shape
            if 0 < i < nz - 1 and 0 < j < ny - 1 and 0 < k < nx - 1:
                verdict.message += "\n  its neighbours: " + ", ".join(
                    f"inp[{a}, {b}, {d}] = {float(inp[a, b, d]):.9g}" for a, b, d in
                    ((i, j, k - 1), (i, j, k + 1), (i, j - 1, k), (i, j + 1, k), (i - 1, j, k),
                     (i + 1, j, k)))
        return verdict

    def _diagnose(self, case, got) -> str:
        inp = case.inputs["inp"]
        if inp.size > (1 << 22):        # chip-sized cases: the alternatives would take long
            return ""
        expected, tolerance = self.reference_values(case)
        expected, tol = expected["out"], tolerance["out"]
        bad = ~(np.abs(got.astype(np.float64) - expected) <= tol)
        unwritten = np.isnan(got)
        inner = interior_mask(inp.shape)
        if not bad.any():
            return ""
        if unwritten.any():
            if not (unwritten & inner).any():
                return ("the boundary points (an index 0 or N - 1 on any axis) were never written: "
                        "they copy the input, out[i, j, k] = inp[i, j, k]. Every thread whose point "
                        "is in the volume must store something.")
            return self._unwritten_hint(case, unwritten)
        if not (bad & inner).any():
            return ("only boundary points are wrong: a point with an index 0 or N - 1 on any axis "
                    "copies the input exactly (out[i, j, k] = inp[i, j, k]), with no coefficients.")
        c = _coefs(case.inputs)
        for pairs, text in _SWAPS + _AXES:
            alt = stencil7(inp, _permuted(c, pairs))
            if np.all(np.abs(got[inner].astype(np.float64) - alt[inner]) <= tol[inner]):
                return text + "."
        seam = self._seam_hint(inp.shape, case, bad & inner)
        if seam:
            return seam
        wrong = bad & inner
        mag = _magnitude(inp, c)[wrong]
        err = np.abs(got[wrong].astype(np.float64) - expected[wrong])
        if np.all(err <= 2.0 ** -8 * mag):
            return ("the values are close, but further off than float32 arithmetic allows (about "
                    "1 part in 1000 of the terms' size): is part of the sum done in a lower "
                    "precision (float16)?")
        return ""

    def _unwritten_hint(self, case, unwritten) -> str:
        nz, ny, nx = unwritten.shape
        where = np.argwhere(unwritten)
        spans = ", ".join(f"{name} from {lo} to {hi}" for name, lo, hi in
                          zip(("i (z)", "j (y)", "k (x)"), where.min(axis=0), where.max(axis=0)))
        if self.layout == "tiled":
            return (f"the unwritten points have {spans}. Each block writes the OUT_TILE³ = "
                    f"{OUT_TILE}³ points inside its {IN_TILE}³ input tile: the point of thread "
                    f"(x, y, z) is (blockIdx.z·{OUT_TILE} + z - 1, blockIdx.y·{OUT_TILE} + y - 1, "
                    f"blockIdx.x·{OUT_TILE} + x - 1), and every thread with 1 ≤ x, y, z ≤ "
                    f"{IN_TILE - 2} whose point is inside the volume stores it.")
        if self.layout == "coarsened":
            count = case.blocks[2] if isinstance(case.blocks, tuple) else 1
            return (f"the unwritten points have {spans}. The grid has {count} slab(s) along z: "
                    f"block z handles planes blockIdx.z·per to min((blockIdx.z + 1)·per, nz) - 1 "
                    f"with per = ceil(nz / gridDim.z); in each plane, threads 1 ≤ x, y ≤ "
                    f"{PLANE_TILE - 2} store the point (blockIdx.y·{PLANE_OUT} + y - 1, "
                    f"blockIdx.x·{PLANE_OUT} + x - 1).")
        return (f"the unwritten points have {spans}. On a 3-D grid x runs along the last "
                "(fastest) index: `k, j, i = cuda.grid(3)` for out[i, j, k]. Check that each bound "
                "compares an index with its own axis (nz = inp.shape[0], ny = inp.shape[1], "
                "nx = inp.shape[2]).")

    def _seam_hint(self, shape, case, bad) -> str:
        where = np.argwhere(bad)
        if self.layout == "tiled":
            local = (where % OUT_TILE)         # 0 or OUT_TILE - 1: next to the tile's halo
            if np.all(np.any((local == 0) | (local == OUT_TILE - 1), axis=1)):
                return ("only points on the faces of an output tile are wrong: their neighbours "
                        "come from the halo. The block's input tile starts one point before its "
                        f"outputs (index blockIdx·{OUT_TILE} + threadIdx - 1), every thread loads "
                        "its own input point (halo threads too, where it is inside the volume), and "
                        "a barrier separates the loads from the reads.")
        if self.layout == "coarsened":
            count = case.blocks[2] if isinstance(case.blocks, tuple) else 1
            firsts = {slab_range(shape[0], count, s)[0] for s in range(count)}
            lasts = {slab_range(shape[0], count, s)[1] - 1 for s in range(count)}
            if np.all(np.isin(where[:, 0], sorted(firsts | lasts))):
                return ("only the first or last plane of a slab is wrong: before the loop, the "
                        "plane below the slab (start - 1) must be loaded as `prev`, and in the last "
                        "plane `next` is the plane after the slab (not 0, unless it is outside the "
                        "volume).")
            local = (where[:, 1:] % PLANE_OUT)
            if np.all(np.any((local == 0) | (local == PLANE_OUT - 1), axis=1)):
                return ("only points on the edges of a block's output square are wrong: their x "
                        "and y neighbours come from the halo threads of the shared plane. Every "
                        "thread (halo threads too) must store its point in the plane, before the "
                        "barrier.")
        return ""


_common = dict(spec=_spec, make_inputs=_inputs, outputs=_outputs, tolerance=_tolerance,
               launch=_launch, bytes_moved=_bytes, flops=_flops, baselines=BASELINES,
               size_label=_label, speed_inputs=_speed_inputs, sample_spec=_sample)

_VALUE_HINT = ("out[i, j, k] = c0·in[i, j, k] + c1·in[i, j, k-1] + c2·in[i, j, k+1] + "
               "c3·in[i, j-1, k] + c4·in[i, j+1, k] + c5·in[i-1, j, k] + c6·in[i+1, j, k] for "
               "interior points, and a copy of in[i, j, k] on the boundary: compare your formula "
               "with it for the element above.")


# ---- 8.1 one thread per output point ---------------------------------------------------------

stencil_basic = StencilProblem(
    "stencil_basic", title="3-D seven-point stencil, one thread per point on a 3-D grid",
    block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK, blocks_for=basic_blocks,
    # (nz, ny, nx): no two sides equal, none a multiple of any block side; a volume with one
    # interior plane of 2 × 3 points; one with no interior at all (every point copies).
    cpu_sizes=Sizes(visible=((9, 11, 13), (3, 4, 5), (1, 2, 3)), hidden=((13, 9, 11), (2, 7, 3),
                                                                             (17, 19, 17)),
                    hidden_random=(2, 1, 15)),
    gpu_sizes=Sizes(visible=((129, 255, 517), (9, 11, 13), (3, 4, 5), (1, 2, 3)),
                    hidden=((13, 9, 11), (2, 7, 3)), hidden_random=(3, 1, 300),
                    speed=SPEED_VOLUME),
    speed_launch=lambda size: (basic_blocks(size, SPEED_BASIC_BLOCK), SPEED_BASIC_BLOCK),
    reference=reference_basic, value_hint=_VALUE_HINT, layout="basic", **_common,
)


# ---- 8.3 a shared-memory input tile, halo included ------------------------------------------------

stencil_tiled = StencilProblem(
    "stencil_tiled", title="3-D seven-point stencil with an IN_TILE³ input tile in shared memory",
    block_sizes=((IN_TILE, IN_TILE, IN_TILE),), visible_block_size=(IN_TILE, IN_TILE, IN_TILE),
    blocks_for=tiled_blocks,
    # Two tiles along every axis in the first case (seams in x, y and z; every last tile
    # partial); one tile; a volume with no interior. CPU sizes stay small: the simulator runs a
    # 512-thread block in ~0.2 s, and the race detector watches every shared access. Hidden
    # 12 × 12 × 14 is 4 times the largest visible volume, in 2 × 2 × 3 blocks.
    cpu_sizes=Sizes(visible=((7, 8, 9), (3, 4, 5), (1, 2, 3)), hidden=((9, 7, 8), (12, 12, 14)),
                    hidden_random=(1, 1, 11)),
    gpu_sizes=Sizes(visible=((129, 255, 517), (7, 8, 9), (3, 4, 5), (1, 2, 3)),
                    hidden=((9, 7, 8),), hidden_random=(3, 1, 300), speed=SPEED_VOLUME),
    speed_launch=lambda size: (tiled_blocks(size), (IN_TILE, IN_TILE, IN_TILE)),
    reference=reference_tiled, value_hint=_VALUE_HINT, layout="tiled", **_common,
)


# ---- 8.4 thread coarsening along z, register tiling ---------------------------------------------

stencil_coarsened = StencilProblem(
    "stencil_coarsened",
    title="3-D seven-point stencil marching along z: PLANE_TILE² blocks, register tiling",
    block_sizes=((PLANE_TILE, PLANE_TILE),), visible_block_size=(PLANE_TILE, PLANE_TILE),
    blocks_for=coarsened_blocks,
    # (nz, ny, nx): the first has two blocks along y (the second partial) and two slabs of three
    # planes; the second two blocks along x and two slabs of two planes; then a single point.
    # Hidden: three slabs of 3, 3 and 1 planes; two blocks along y in slabs of 3 and 2 planes; a
    # random small volume; and 17 × 14 × 14, 4 times the largest visible volume in one column of
    # blocks (17 block-planes, the most of any case: the simulator runs a 256-thread block at
    # ~0.1-0.3 s per plane, race detector included).
    cpu_sizes=Sizes(visible=((6, 15, 9), (4, 3, 16), (1, 1, 1)), hidden=((7, 5, 9), (5, 16, 4),
                                                                               (17, 14, 14)),
                    hidden_random=(1, 1, 10)),
    gpu_sizes=Sizes(visible=((129, 255, 517), (6, 15, 9), (4, 3, 16), (1, 1, 1)),
                    hidden=((7, 5, 9), (5, 16, 4)), hidden_random=(3, 1, 300), speed=SPEED_VOLUME),
    speed_launch=lambda size: (coarsened_blocks(size), (PLANE_TILE, PLANE_TILE)),
    reference=reference_coarsened,
    # The reference prefetches planes ahead, which the exercise does not ask for, hence a bar well
    # below 1. On the H200 (docs/benchmarks.md): reference 0.640 ms, the plain register-tiled
    # solution 0.685-0.693 ms (92%), PMPP's three shared planes 0.775 ms; numba parallel on 32
    # cores 98 ms.
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="parallel", min_speedup=10.0),
    value_hint=_VALUE_HINT, layout="coarsened", **_common,
)


# ---- 8.2 predict: PMPP's arithmetic intensity of a tiled stencil ----------------------------------

def intensity(box_x, box_y, box_z):
    """FLOPs per byte loaded of a block that loads a box_x × box_y × box_z float32 input box once
    and computes the (box_x - 2)(box_y - 2)(box_z - 2) points inside it, 13 FLOPs each."""
    inner = (box_x - 2.0) * (box_y - 2.0) * (box_z - 2.0)
    return FLOPS_PER_POINT * inner / (4.0 * box_x * box_y * box_z)


def _intensity_spec(box_x, box_y, box_z, **launch):
    return {"intensity": intensity(box_x, box_y, box_z)}


def _intensity_inputs(rng, count):
    bx, by, bz = (rng.integers(3, 65, count).astype(np.float64) for _ in range(3))
    # The first cases: PMPP's 8³ tile, 16³, 32³ (limit 3.25 in sight), the coarsened kernel's box
    # (16 × 16 in the plane, a slab of 32 planes and its two halo planes), the smallest box, a
    # flat one.
    first = [(8, 8, 8), (16, 16, 16), (32, 32, 32), (16, 16, 34), (3, 3, 3), (34, 10, 5)]
    for n, (a, b, c) in enumerate(first[:count]):
        bx[n], by[n], bz[n] = a, b, c
    return {"box_x": bx, "box_y": by, "box_z": bz}


def _intensity_tolerance(inputs, expected):
    return {"intensity": 64 * U64 * np.abs(expected["intensity"])}


stencil_intensity = formula_problem(
    "stencil_intensity", title="PMPP's arithmetic intensity of a tiled seven-point stencil",
    function="stencil_intensity", args=(("box_x", int), ("box_y", int), ("box_z", int)),
    results=("intensity",), spec=_intensity_spec, make_inputs=_intensity_inputs,
    tolerance=_intensity_tolerance, sizes=Sizes(visible=(6,), hidden=(200,)),
    value_hint=("a block loads every point of its box once (4 bytes each, halo included) and "
                "computes the points inside it, those with no index on the box's faces: "
                "(box_x - 2)(box_y - 2)(box_z - 2) of them, 13 FLOPs each (7 multiplies, 6 "
                "additions). The intensity is FLOPs divided by bytes loaded."),
    size_label=lambda count: f"{count} boxes",
)
