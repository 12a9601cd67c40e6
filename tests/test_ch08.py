"""Chapter 8: do the stencil checks pass correct kernels written several ways (one thread per
point, a shared 3-D tile, z-marching with three shared planes or with register tiling) and fail
each classic stencil bug (swapped axes or coefficients, an unwritten or computed boundary, a
missing barrier, a tile without its halo, a slab that forgets the plane below it) with a verdict
that says what went wrong? Is the intensity exercise judged to float64 precision? Are the test
volumes structured, the tolerances tight, the sampled speed check the same as the full spec?"""

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag
from autograder.checks import CheckFailed, gamma

from verdicts import judge_entry, verdict_text as _verdict

ch08 = ag.problems.ch08
CPU = not ag.backend.is_gpu
IN_TILE, OUT_TILE = ch08.IN_TILE, ch08.OUT_TILE
PLANE_TILE, PLANE_OUT = ch08.PLANE_TILE, ch08.PLANE_OUT




# ---- 8.1 stencil_basic -----------------------------------------------------------------------------

@cuda.jit
def basic_ok(inp, out, c0, c1, c2, c3, c4, c5, c6):
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if i < nz and j < ny and k < nx:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = inp[i, j, k]
        else:
            out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, k - 1] + c2 * inp[i, j, k + 1]
                            + c3 * inp[i, j - 1, k] + c4 * inp[i, j + 1, k]
                            + c5 * inp[i - 1, j, k] + c6 * inp[i + 1, j, k])


@cuda.jit
def basic_ok_explicit_float64(inp, out, c0, c1, c2, c3, c4, c5, c6):
    # Explicit indices, an early return, interior test first, a float64 sum in another order.
    i = cuda.blockIdx.z * cuda.blockDim.z + cuda.threadIdx.z
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    k = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= out.shape[0] or j >= out.shape[1] or k >= out.shape[2]:
        return
    if 0 < i < out.shape[0] - 1 and 0 < j < out.shape[1] - 1 and 0 < k < out.shape[2] - 1:
        acc = np.float64(c6) * inp[i + 1, j, k] + np.float64(c5) * inp[i - 1, j, k]
        acc += np.float64(c4) * inp[i, j + 1, k] + np.float64(c3) * inp[i, j - 1, k]
        acc += np.float64(c2) * inp[i, j, k + 1] + np.float64(c1) * inp[i, j, k - 1]
        acc += np.float64(c0) * inp[i, j, k]
        out[i, j, k] = acc
    else:
        out[i, j, k] = inp[i, j, k]


@cuda.jit
def basic_swapped_xz(inp, out, c0, c1, c2, c3, c4, c5, c6):
    i, j, k = cuda.grid(3)             # x is the last index: this takes it as the first
    nz, ny, nx = inp.shape
    if i < nz and j < ny and k < nx:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = inp[i, j, k]
        else:
            out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, k - 1] + c2 * inp[i, j, k + 1]
                            + c3 * inp[i, j - 1, k] + c4 * inp[i, j + 1, k]
                            + c5 * inp[i - 1, j, k] + c6 * inp[i + 1, j, k])


@cuda.jit
def basic_no_boundary(inp, out, c0, c1, c2, c3, c4, c5, c6):
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if 0 < i < nz - 1 and 0 < j < ny - 1 and 0 < k < nx - 1:
        out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, k - 1] + c2 * inp[i, j, k + 1]
                        + c3 * inp[i, j - 1, k] + c4 * inp[i, j + 1, k]
                        + c5 * inp[i - 1, j, k] + c6 * inp[i + 1, j, k])


@cuda.jit
def basic_clamped_boundary(inp, out, c0, c1, c2, c3, c4, c5, c6):
    # Computes the stencil everywhere with neighbours clamped into the volume.
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if i < nz and j < ny and k < nx:
        out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, max(k - 1, 0)]
                        + c2 * inp[i, j, min(k + 1, nx - 1)] + c3 * inp[i, max(j - 1, 0), k]
                        + c4 * inp[i, min(j + 1, ny - 1), k] + c5 * inp[max(i - 1, 0), j, k]
                        + c6 * inp[min(i + 1, nz - 1), j, k])


def _basic_with(order):
    """A basic kernel whose six neighbours are paired with the coefficients in ``order``."""
    a, b, c, d, e, f = order

    @cuda.jit
    def kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
        k, j, i = cuda.grid(3)
        nz, ny, nx = inp.shape
        cs = (c1, c2, c3, c4, c5, c6)
        if i < nz and j < ny and k < nx:
            if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
                out[i, j, k] = inp[i, j, k]
            else:
                out[i, j, k] = (c0 * inp[i, j, k] + cs[a] * inp[i, j, k - 1]
                                + cs[b] * inp[i, j, k + 1] + cs[c] * inp[i, j - 1, k]
                                + cs[d] * inp[i, j + 1, k] + cs[e] * inp[i - 1, j, k]
                                + cs[f] * inp[i + 1, j, k])
    return kernel


basic_swapped_c1_c2 = _basic_with((1, 0, 2, 3, 4, 5))
basic_coefficients_xz = _basic_with((4, 5, 2, 3, 0, 1))


@cuda.jit
def basic_no_guard(inp, out, c0, c1, c2, c3, c4, c5, c6):
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
        out[i, j, k] = inp[i, j, k]
    else:
        out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, k - 1] + c2 * inp[i, j, k + 1]
                        + c3 * inp[i, j - 1, k] + c4 * inp[i, j + 1, k]
                        + c5 * inp[i - 1, j, k] + c6 * inp[i + 1, j, k])


@cuda.jit
def basic_float16(inp, out, c0, c1, c2, c3, c4, c5, c6):
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if i < nz and j < ny and k < nx:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = inp[i, j, k]
        else:
            h = np.float16
            acc = (h(c0) * h(inp[i, j, k]) + h(c1) * h(inp[i, j, k - 1]) + h(c2) * h(inp[i, j, k + 1])
                   + h(c3) * h(inp[i, j - 1, k]) + h(c4) * h(inp[i, j + 1, k])
                   + h(c5) * h(inp[i - 1, j, k]) + h(c6) * h(inp[i + 1, j, k]))
            out[i, j, k] = np.float32(acc)


BASIC = {
    # name: (kernel, None if correct else fragments the CPU-mode verdict must contain)
    "basic_ok": (basic_ok, None),
    "basic_ok_explicit_float64": (basic_ok_explicit_float64, None),
    "basic_swapped_xz": (basic_swapped_xz, ("9 × 11 × 13 volume", "x runs along the last")),
    "basic_no_boundary": (basic_no_boundary, ("never written", "boundary points", "copy the input")),
    "basic_clamped_boundary": (basic_clamped_boundary, ("only boundary points are wrong",)),
    "basic_swapped_c1_c2": (basic_swapped_c1_c2, ("c1 and c2 are swapped", "its neighbours: inp[")),
    "basic_coefficients_xz": (basic_coefficients_xz, ("the x and z neighbours are swapped",)),
    "basic_no_guard": (basic_no_guard, ("out of bounds", "guard all three indices")),
    "basic_float16": (basic_float16, ("float16",)),
}


@pytest.mark.parametrize("name", sorted(BASIC))
def test_basic_submission_verdict(name):
    """Is each one-thread-per-point kernel judged as it should be?"""
    judge_entry(ch08.stencil_basic, BASIC, name)


def test_basic_cases_are_awkward_shapes():
    """No side a multiple of a block side in the first case, no two sides equal, non-cubic blocks,
    a case with no interior point, hidden block shapes drawn from several."""
    first = ch08.stencil_basic.cases()[0]
    assert len(set(first.size)) == 3 and first.threads == (8, 4, 2)
    assert all(s % b for s, b in zip(first.size[::-1], first.threads))
    assert any(min(c.size) < 3 for c in ch08.stencil_basic.cases())
    shapes = {c.threads for seed in range(6) for c in ch08.stencil_basic.cases(hidden=True, seed=seed)}
    assert len(shapes) >= 3


# ---- 8.3 stencil_tiled -----------------------------------------------------------------------------

def _tiled(barrier=True, halo=True, guard_loads=True, offset=OUT_TILE):
    @cuda.jit
    def kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
        tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), float32)
        tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
        k = cuda.blockIdx.x * offset + tx - 1
        j = cuda.blockIdx.y * offset + ty - 1
        i = cuda.blockIdx.z * offset + tz - 1
        nz, ny, nx = inp.shape
        inside = 0 <= i < nz and 0 <= j < ny and 0 <= k < nx
        centre = 1 <= tx <= IN_TILE - 2 and 1 <= ty <= IN_TILE - 2 and 1 <= tz <= IN_TILE - 2
        if (inside or not guard_loads) and (halo or centre):
            tile[tz, ty, tx] = inp[i, j, k]
        if barrier:
            cuda.syncthreads()
        if inside and centre:
            if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
                out[i, j, k] = tile[tz, ty, tx]
            else:
                out[i, j, k] = (c0 * tile[tz, ty, tx] + c1 * tile[tz, ty, tx - 1]
                                + c2 * tile[tz, ty, tx + 1] + c3 * tile[tz, ty - 1, tx]
                                + c4 * tile[tz, ty + 1, tx] + c5 * tile[tz - 1, ty, tx]
                                + c6 * tile[tz + 1, ty, tx])
    return kernel


@cuda.jit
def tiled_ok_clamped_loads(inp, out, c0, c1, c2, c3, c4, c5, c6):
    # Every thread loads a clamped point (no branch); halo values outside are never used.
    tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), np.float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    nz, ny, nx = inp.shape
    k = cuda.blockIdx.x * OUT_TILE + tx - 1
    j = cuda.blockIdx.y * OUT_TILE + ty - 1
    i = cuda.blockIdx.z * OUT_TILE + tz - 1
    tile[tz, ty, tx] = inp[min(max(i, 0), nz - 1), min(max(j, 0), ny - 1), min(max(k, 0), nx - 1)]
    cuda.syncthreads()
    if tx == 0 or ty == 0 or tz == 0 or tx == IN_TILE - 1 or ty == IN_TILE - 1 or tz == IN_TILE - 1:
        return
    if i >= nz or j >= ny or k >= nx:
        return
    v = tile[tz, ty, tx]
    if 0 < i < nz - 1 and 0 < j < ny - 1 and 0 < k < nx - 1:
        v = (c0 * v + c1 * tile[tz, ty, tx - 1] + c2 * tile[tz, ty, tx + 1]
             + c3 * tile[tz, ty - 1, tx] + c4 * tile[tz, ty + 1, tx]
             + c5 * tile[tz - 1, ty, tx] + c6 * tile[tz + 1, ty, tx])
    out[i, j, k] = v


RACE = "shared-memory race on `tile`"
TILED = {
    "tiled_ok": (_tiled(), None),
    "tiled_ok_clamped_loads": (tiled_ok_clamped_loads, None),
    "tiled_no_barrier": (_tiled(barrier=False), (RACE, "no cuda.syncthreads() between them")),
    "tiled_no_halo": (_tiled(halo=False), ("faces of an output tile", "halo")),
    "tiled_unguarded_loads": (_tiled(guard_loads=False),
                              ("out of bounds", "halo points can lie outside")),
    "tiled_offset_in_tile": (_tiled(offset=IN_TILE), ("never written", "blockIdx.x·6 + x - 1")),
}


@pytest.mark.parametrize("name", sorted(TILED))
def test_tiled_submission_verdict(name):
    """Is each shared-tile kernel judged as it should be?"""
    judge_entry(ch08.stencil_tiled, TILED, name)


@pytest.mark.skipif(not CPU, reason="the race detector is CPU mode's; on a GPU the race may not show")
def test_missing_barrier_fails_every_time():
    """Does the tile without its barrier fail on every run, naming the load and the read?"""
    for _ in range(2):
        with pytest.raises(CheckFailed) as info:
            ch08.stencil_tiled.check(TILED["tiled_no_barrier"][0])
        text = str(info.value)
        assert RACE in text and "tile[tz, ty, tx] = inp[i, j, k]" in text, text


def _small_cases(problem):
    """The visible cases of CPU mode's sizes, in order: on a GPU they follow a chip-sized one."""
    return [c for c in problem.cases() if c.size in problem.cpu_sizes.visible]


def test_tiled_cases_cross_tile_seams():
    """Is the first of the small cases (a GPU's visible cases start with a chip-sized volume) two
    tiles along every axis, every case launched with IN_TILE³ blocks over OUT_TILE³ outputs?"""
    first = _small_cases(ch08.stencil_tiled)[0]
    assert first.blocks == (2, 2, 2) and all(s % OUT_TILE for s in first.size)
    for case in ch08.stencil_tiled.cases() + ch08.stencil_tiled.cases(hidden=True):
        nz, ny, nx = case.size
        assert case.threads == (IN_TILE,) * 3
        assert case.blocks == (-(-nx // OUT_TILE), -(-ny // OUT_TILE), -(-nz // OUT_TILE))


# ---- 8.4 stencil_coarsened -------------------------------------------------------------------------

def _register_tiled(first_barrier=True, second_barrier=True, load_below=True):
    @cuda.jit
    def kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
        plane = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
        nz, ny, nx = inp.shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        k = cuda.blockIdx.x * PLANE_OUT + tx - 1
        j = cuda.blockIdx.y * PLANE_OUT + ty - 1
        per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
        start = cuda.blockIdx.z * per
        stop = min(start + per, nz)
        inside = 0 <= j < ny and 0 <= k < nx
        below = float32(0)
        here = float32(0)
        if inside and start < stop:
            here = inp[start, j, k]
            if start > 0 and load_below:
                below = inp[start - 1, j, k]
        for i in range(start, stop):
            above = float32(0)
            if inside and i + 1 < nz:
                above = inp[i + 1, j, k]
            plane[ty, tx] = here
            if first_barrier:
                cuda.syncthreads()
            if inside and 1 <= tx <= PLANE_TILE - 2 and 1 <= ty <= PLANE_TILE - 2:
                if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                    out[i, j, k] = here
                else:
                    out[i, j, k] = (c0 * here + c1 * plane[ty, tx - 1] + c2 * plane[ty, tx + 1]
                                    + c3 * plane[ty - 1, tx] + c4 * plane[ty + 1, tx]
                                    + c5 * below + c6 * above)
            if second_barrier:
                cuda.syncthreads()
            below = here
            here = above
    return kernel


@cuda.jit
def coarsened_ok_three_planes(inp, out, c0, c1, c2, c3, c4, c5, c6):
    # PMPP §8.4's shape: three shared planes, each thread copying its own point down a plane.
    prev = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    curr = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nxt = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nz, ny, nx = inp.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    k = cuda.blockIdx.x * PLANE_OUT + tx - 1
    j = cuda.blockIdx.y * PLANE_OUT + ty - 1
    per = (nz + cuda.gridDim.z - 1) // cuda.gridDim.z
    start = cuda.blockIdx.z * per
    stop = min(start + per, nz)
    inside = 0 <= j < ny and 0 <= k < nx
    if inside and 0 < start < nz:
        prev[ty, tx] = inp[start - 1, j, k]
    if inside and start < nz:
        curr[ty, tx] = inp[start, j, k]
    for i in range(start, stop):
        if inside and i + 1 < nz:
            nxt[ty, tx] = inp[i + 1, j, k]
        cuda.syncthreads()
        if inside and 1 <= tx <= PLANE_TILE - 2 and 1 <= ty <= PLANE_TILE - 2:
            if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                out[i, j, k] = curr[ty, tx]
            else:
                out[i, j, k] = (c0 * curr[ty, tx] + c1 * curr[ty, tx - 1] + c2 * curr[ty, tx + 1]
                                + c3 * curr[ty - 1, tx] + c4 * curr[ty + 1, tx]
                                + c5 * prev[ty, tx] + c6 * nxt[ty, tx])
        cuda.syncthreads()
        prev[ty, tx] = curr[ty, tx]
        curr[ty, tx] = nxt[ty, tx]


@cuda.jit
def coarsened_whole_column(inp, out, c0, c1, c2, c3, c4, c5, c6):
    # Ignores the slabs: every block of a column marches over all of z (right, and slow).
    plane = cuda.shared.array((PLANE_TILE, PLANE_TILE), float32)
    nz, ny, nx = inp.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    k = cuda.blockIdx.x * PLANE_OUT + tx - 1
    j = cuda.blockIdx.y * PLANE_OUT + ty - 1
    inside = 0 <= j < ny and 0 <= k < nx
    for i in range(nz):
        v = inp[i, j, k] if inside else float32(0)
        plane[ty, tx] = v
        cuda.syncthreads()
        if inside and 1 <= tx <= PLANE_TILE - 2 and 1 <= ty <= PLANE_TILE - 2:
            if i == 0 or i == nz - 1 or j == 0 or j == ny - 1 or k == 0 or k == nx - 1:
                out[i, j, k] = v
            else:
                out[i, j, k] = (c0 * v + c1 * plane[ty, tx - 1] + c2 * plane[ty, tx + 1]
                                + c3 * plane[ty - 1, tx] + c4 * plane[ty + 1, tx]
                                + c5 * inp[i - 1, j, k] + c6 * inp[i + 1, j, k])
        cuda.syncthreads()


PLANE_RACE = "shared-memory race on `plane`"
COARSENED = {
    "coarsened_register_tiled": (_register_tiled(), None),
    "coarsened_ok_three_planes": (coarsened_ok_three_planes, None),
    "coarsened_whole_column": (coarsened_whole_column, None),
    "coarsened_reference": (ch08.reference_coarsened(), None),
    "coarsened_no_first_barrier": (_register_tiled(first_barrier=False),
                                   (PLANE_RACE, "no cuda.syncthreads() between them")),
    "coarsened_no_second_barrier": (_register_tiled(second_barrier=False),
                                    (PLANE_RACE, "no cuda.syncthreads() between them")),
    "coarsened_forgets_plane_below": (_register_tiled(load_below=False),
                                      ("first or last plane of a slab", "start - 1")),
}


@pytest.mark.parametrize("name", sorted(COARSENED))
def test_coarsened_submission_verdict(name):
    """Is each z-marching kernel judged as it should be?"""
    judge_entry(ch08.stencil_coarsened, COARSENED, name)


@pytest.mark.skipif(not CPU, reason="the race detector is CPU mode's")
def test_missing_second_barrier_names_the_next_plane():
    """Without the barrier after the reads, the next plane's store races with this plane's read."""
    with pytest.raises(CheckFailed) as info:
        ch08.stencil_coarsened.check(COARSENED["coarsened_no_second_barrier"][0])
    text = str(info.value)
    assert "plane[ty, tx] = here" in text and "plane[ty" in text, text


def test_coarsened_cases_cross_slab_and_block_seams():
    """The visible cases cross a block seam along y and along x, and slab seams; the hidden fixed
    cases have three slabs with a short last one, and a y seam; PLANE_TILE² blocks everywhere."""
    first, second = _small_cases(ch08.stencil_coarsened)[:2]
    assert first.blocks == (1, 2, 2) and second.blocks == (2, 1, 2)
    hidden = ch08.stencil_coarsened.cases(hidden=True)
    nz = hidden[0].size[0]
    assert [ch08.slab_range(nz, hidden[0].blocks[2], s) for s in range(hidden[0].blocks[2])] == [
        (0, 3), (3, 6), (6, 7)]
    assert hidden[1].blocks == (1, 2, 2)
    for case in ch08.stencil_coarsened.cases() + ch08.stencil_coarsened.cases(hidden=True):
        assert case.threads == (PLANE_TILE, PLANE_TILE)


def test_slabs_on_a_large_volume():
    """Speed-size volumes get slabs of about 32 planes; small ones slabs of 3."""
    nz = ch08.SPEED_VOLUME[0]
    count = ch08.slabs(nz)
    ranges = [ch08.slab_range(nz, count, s) for s in range(count)]
    assert ranges[0][0] == 0 and ranges[-1][1] == nz
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert 16 <= ranges[0][1] - ranges[0][0] <= 32
    assert ch08.slabs(6) == 2 and ch08.slabs(1) == 1


# ---- the spec, inputs and tolerance ----------------------------------------------------------------

def test_volume_has_structure():
    """Edges (large jumps between neighbours), a smooth part, different slopes along each axis,
    noise; seeded."""
    vol = ch08.test_volume(20, 24, 28, 3).astype(np.float64)
    np.testing.assert_array_equal(vol, ch08.test_volume(20, 24, 28, 3))
    for axis in range(3):
        d = np.abs(np.diff(vol, axis=axis))
        assert d.max() > 0.5                      # sharp faces
        assert np.median(d) < 0.1                 # mostly smooth
    means = [vol.mean(axis=tuple(a for a in range(3) if a != axis)) for axis in range(3)]
    slopes = [np.polyfit(np.linspace(0, 1, m.size), m, 1)[0] for m in means]
    assert len({round(s, 1) for s in slopes}) == 3, slopes


def test_spec_and_tolerance():
    """The float64 spec against a loop; boundary exact; interior bound gamma_7 sum |c x|; float32
    arithmetic in any order within it."""
    case = ch08.stencil_basic.cases()[0]
    x = case.inputs["inp"].astype(np.float64)
    c = [float(case.inputs[n]) for n in ch08.COEFFICIENTS]
    exp = ch08.stencil_basic.expected(case)["out"]
    i, j, k = 4, 5, 6
    direct = (c[0] * x[i, j, k] + c[1] * x[i, j, k - 1] + c[2] * x[i, j, k + 1] + c[3] * x[i, j - 1, k]
              + c[4] * x[i, j + 1, k] + c[5] * x[i - 1, j, k] + c[6] * x[i + 1, j, k])
    assert exp[i, j, k] == pytest.approx(direct, rel=1e-14)
    assert exp[0, 3, 3] == x[0, 3, 3] and exp[3, 3, -1] == x[3, 3, -1]
    tol = ch08.stencil_basic.tolerance(case.inputs, {"out": exp})["out"]
    assert tol[0, 3, 3] == 0
    mag = (abs(c[0] * x[i, j, k]) + abs(c[1] * x[i, j, k - 1]) + abs(c[2] * x[i, j, k + 1])
           + abs(c[3] * x[i, j - 1, k]) + abs(c[4] * x[i, j + 1, k]) + abs(c[5] * x[i - 1, j, k])
           + abs(c[6] * x[i + 1, j, k]))
    assert tol[i, j, k] == pytest.approx(gamma(7) * mag, rel=1e-6)
    # Reversed-order float32 sums pass; a sum in float16 does not.
    x32 = case.inputs["inp"]
    c32 = [case.inputs[n] for n in ch08.COEFFICIENTS]
    inner = (slice(1, -1),) * 3
    views = [x32[1:-1, 1:-1, 1:-1], x32[1:-1, 1:-1, :-2], x32[1:-1, 1:-1, 2:], x32[1:-1, :-2, 1:-1],
             x32[1:-1, 2:, 1:-1], x32[:-2, 1:-1, 1:-1], x32[2:, 1:-1, 1:-1]]
    acc = np.zeros_like(views[0])
    for cm, v in reversed(list(zip(c32, views))):
        acc = (acc + cm * v).astype(np.float32)
    assert np.all(np.abs(acc - exp[inner]) <= tol[inner])
    h = np.zeros(views[0].shape, np.float16)
    for cm, v in zip(c32, views):
        h = (h + np.float16(cm) * v.astype(np.float16)).astype(np.float16)
    assert not np.all(np.abs(h.astype(np.float64) - exp[inner]) <= tol[inner])


def test_coefficients_distinct_and_signed():
    """Any swapped pair of coefficients changes the result."""
    for seed in range(5):
        case = ch08.stencil_basic.cases(hidden=True, seed=seed)[0]
        c = [float(case.inputs[n]) for n in ch08.COEFFICIENTS]
        assert min(abs(a - b) for n, a in enumerate(c) for b in c[n + 1:]) > 1e-3


def test_sampled_check_matches_full_spec():
    """The speed test's sampled expected values and tolerances are the full spec's."""
    inputs = ch08.stencil_coarsened.speed_inputs(np.random.default_rng(1), (13, 17, 19))
    exp = ch08.stencil7(inputs["inp"], [inputs[n] for n in ch08.COEFFICIENTS])
    tol = ch08.stencil_basic.tolerance(inputs, {"out": exp})["out"]
    idx = np.arange(exp.size)
    got_exp, got_tol = ch08.stencil_coarsened.sampled(inputs, idx)
    np.testing.assert_allclose(got_exp["out"], exp.reshape(-1), rtol=1e-14)
    np.testing.assert_allclose(got_tol["out"], tol.reshape(-1), rtol=1e-12)
    # The content sets of a speed run share their coefficients (the harness launches them all
    # with the first set's scalars).
    other = ch08.stencil_coarsened.speed_inputs(np.random.default_rng(2), (13, 17, 19))
    assert all(inputs[n] == other[n] for n in ch08.COEFFICIENTS)


def test_bytes_and_flops():
    assert ch08.stencil_basic.bytes_moved((10, 20, 30)) == 8 * 6000
    assert ch08.stencil_basic.flops((10, 20, 30)) == 13 * 8 * 18 * 28
    assert ch08.stencil_basic.flops((2, 20, 30)) == 0


def test_cpu_baselines_agree_with_spec():
    """The NumPy and Numba baselines compute the spec (within the tolerance)."""
    case = ch08.stencil_basic.cases()[0]
    exp = ch08.stencil_basic.expected(case)["out"]
    tol = ch08.stencil_basic.tolerance(case.inputs, {"out": exp})["out"]
    for key, baseline in ch08.BASELINES.items():
        out = np.full(case.size, np.nan, np.float32)
        baseline.run(out=out, **case.inputs)
        assert np.all(np.abs(out - exp) <= tol), key


# ---- 8.2 stencil_intensity -------------------------------------------------------------------------

def intensity_ok(box_x, box_y, box_z):
    return 13 * (box_x - 2) * (box_y - 2) * (box_z - 2) / (4 * box_x * box_y * box_z)


def intensity_ok_per_point(box_x, box_y, box_z):
    loads_per_point = box_x * box_y * box_z / ((box_x - 2) * (box_y - 2) * (box_z - 2))
    return 13 / (4 * loads_per_point)


def intensity_no_halo(box_x, box_y, box_z):
    return 13 / 4


def intensity_seven_flops(box_x, box_y, box_z):
    return 7 * (box_x - 2) * (box_y - 2) * (box_z - 2) / (4 * box_x * box_y * box_z)


def intensity_halo_one_side(box_x, box_y, box_z):
    return 13 * (box_x - 1) * (box_y - 1) * (box_z - 1) / (4 * box_x * box_y * box_z)


def intensity_rounded(box_x, box_y, box_z):
    return round(intensity_ok(box_x, box_y, box_z), 3)


INTENSITY = {
    "intensity_ok": (intensity_ok, None),
    "intensity_ok_per_point": (intensity_ok_per_point, None),
    "intensity_no_halo": (intensity_no_halo, "(box_x - 2)(box_y - 2)(box_z - 2)"),
    "intensity_seven_flops": (intensity_seven_flops, "13 FLOPs each"),
    "intensity_halo_one_side": (intensity_halo_one_side, "elements are wrong"),
    "intensity_rounded": (intensity_rounded, "elements are wrong"),
}


@pytest.mark.parametrize("name", sorted(INTENSITY))
def test_intensity_verdict(name):
    fn, expected = INTENSITY[name]
    failure = _verdict(ch08.stencil_intensity, fn)
    if expected is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} passed but is wrong"
        assert expected in failure, failure


def test_intensity_worked_numbers():
    """PMPP's numbers: the 8³ tile reaches 1.37 FLOP/B, the limit is 3.25; the basic kernel's
    seven loads per point give 0.46."""
    assert ch08.intensity(8, 8, 8) == pytest.approx(1.371, abs=1e-3)
    assert ch08.intensity(1000, 1000, 1000) == pytest.approx(3.25, rel=1e-2)
    assert ch08.FLOPS_PER_POINT / (7 * 4) == pytest.approx(0.464, abs=1e-3)
    case = ch08.stencil_intensity.cases()[0]
    assert case.inputs["box_x"][0] == 8 and case.inputs["box_z"][3] == 34


# ---- on a GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_reference_kernels_at_speed_size():
    """On a GPU: the reference kernels are right at the speed size, and their bandwidth against a
    copy of the same bytes (printed for calibration; not asserted)."""
    rows = ch08.measure([
        ("basic (reference_basic)", ch08.stencil_basic, ch08.reference_basic()),
        ("tiled 8³ (reference_tiled)", ch08.stencil_tiled, ch08.reference_tiled()),
        ("three shared planes", ch08.stencil_coarsened, ch08.reference_three_planes()),
        ("register tiled, no prefetch", ch08.stencil_coarsened, ch08.reference_register_tiled()),
        ("register tiled, 4 planes ahead (reference)", ch08.stencil_coarsened,
         ch08.reference_coarsened()),
    ])
    for row in rows:
        print(f"{row['label']:45s} {row['ms']:8.3f} ms {row['gbps']:8.1f} GB/s "
              f"{row['of_copy']:6.0%} of copy  right: {row['right']}")
    assert all(row["right"] for row in rows)


@pytest.mark.parametrize("name", ["variant_flat_rows4", "variant_flat_rows4_host_views",
                                  "variant_flat_rows4_late_x"])
def test_flat_bench_kernels_are_right_across_warps_tiles_and_chunks(name):
    """The flat-offset bench rows on volumes wider than a warp and taller than a tile (partial
    ones both ways) and deep enough for several z chunks: the visible cases are smaller."""
    import copy

    from autograder.grading.problem import Sizes
    p = copy.copy(ch08.stencil_coarsened)
    p.cpu_sizes = p.gpu_sizes = Sizes(visible=((9, 37, 70), (5, 17, 33)), hidden=(),
                                      hidden_random=(0, 1, 2))
    verdict = p.verdict(getattr(ch08, name)(), p.cases())
    assert verdict.passed, verdict
