"""Chapter 18's graded exercises: the electrostatic potential of a slice of a grid by direct Coulomb
summation, gathered (a thread per grid point), coarsened with coalesced stores, and summed only
over the atoms within a cutoff (spatial bins); and the work binning saves, as a formula.

A case's size is ``(ny, nx, A)``: a slice of ny rows by nx columns and A atoms (the coarsened
exercise adds its coarsening factor: ``(ny, nx, A, F)``). Grid point ``(j, i)`` is at
``(i·h, j·h, z)``; ``atoms[a] = (x, y, z, q)``, float32. Every atom is at least
:data:`MIN_DZ` grid spacings above or below the slice's plane, so no distance is near zero.

**The error bound** (float64 spec, float32 kernel). A term ``q/r`` computed in float32 carries:
the rounding of r² = dx² + dy² + dz² and of the square root and the division (or a reciprocal
square root), a few units u = 2⁻²⁴ of the term: we allow ``8u``; and the rounding of the
coordinates themselves: ``float32(i)·h`` and ``x − x_a`` are each rounded relative to the
coordinates' size M = |x|+|x_a|+|y|+|y_a|+|z|+|z_a|, not to the difference, so r carries an
absolute error up to about ``2u·M`` and the term a relative one of ``2u·M/r`` (allowed twice).
Summing A terms in float32 in any order adds ``γ_A·Σ|terms|``. So ::

    |V − V₆₄| ≤ (γ_A + 8u)·Σ|q_a|/r_a + 4u·Σ|q_a|·M_a/r_a² + tiny

A float64 accumulator passes; one atom left out does not (charges are 0.1 to 1 in size).
"""

from __future__ import annotations

import numpy as np

from autograder.core.checks import TINY32, U32, gamma
from autograder.core.spec import Case
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch18.references import (COARSEN_MAX, reference_coarsened,
                                                 reference_cutoff, reference_gather)
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.inputs import cores

U64 = 2.0 ** -53
MIN_DZ = 0.75            # the least |z_atom − z| in grid spacings: no atom on the slice
BOUNDARY = 2.0 ** -12    # |r − cutoff| ≤ BOUNDARY·cutoff: an atom either side of the cutoff is right
BLOCK_SHAPES = ((8, 4), (16, 2), (4, 4))
VISIBLE_BLOCK = (8, 4)
SPEED_BLOCK = (32, 8)
# The speed test's slice: 1024 × 1024 points and 10,000 atoms, 1.05·10^10 atom-point pairs.
SPEED_SLICE = (1024, 1024, 10000)
FLOPS_PER_PAIR = 11


# ---- the spec -------------------------------------------------------------------------------------

def _terms(atoms, h, z, rows, cols):
    """(q/r, |q|/r, |q|·M/r², r) for rows × cols points against every atom: [len(rows), A]."""
    a = np.asarray(atoms, np.float64)
    h, z = float(h), float(z)
    px = np.asarray(cols, np.float64) * h
    py = np.asarray(rows, np.float64) * h
    dx = px[:, None] - a[None, :, 0]
    dy = py[:, None] - a[None, :, 1]
    dz = z - a[None, :, 2]
    r = np.sqrt(dx * dx + dy * dy + dz * dz)
    M = np.abs(px)[:, None] + np.abs(a[None, :, 0]) + np.abs(py)[:, None] + np.abs(a[None, :, 1]) \
        + abs(z) + np.abs(a[None, :, 2])
    q = a[None, :, 3]
    return q / r, np.abs(q) / r, np.abs(q) * M / (r * r), r


def potential_at(atoms, h, z, rows, cols, cutoff=None, step: int = 1024):
    """V at the points (rows[k], cols[k]) in float64, and its error bound (module docstring);
    with ``cutoff``, only atoms with r < cutoff count, and atoms with |r − cutoff| ≤
    BOUNDARY·cutoff add their |q|/r to the bound (either side is right for them: float32's r can
    fall on the other side of the cutoff than float64's)."""
    rows = np.asarray(rows).reshape(-1)
    cols = np.asarray(cols).reshape(-1)
    A = len(atoms)
    V = np.zeros(rows.size)
    tol = np.zeros(rows.size)
    for s in range(0, rows.size, step):
        sl = slice(s, s + step)
        t, mag, coord, r = _terms(atoms, h, z, rows[sl], cols[sl])
        if cutoff is not None:
            inside = r < float(cutoff)
            edge = np.abs(r - float(cutoff)) <= BOUNDARY * float(cutoff)
            t, coord = np.where(inside, t, 0.0), np.where(inside | edge, coord, 0.0)
            tol[sl] = np.where(edge, mag, 0.0).sum(axis=1)
            mag = np.where(inside | edge, mag, 0.0)
        V[sl] = t.sum(axis=1)
        tol[sl] += (gamma(max(A, 1)) + 8 * U32) * mag.sum(axis=1) + 4 * U32 * coord.sum(axis=1)
    return V, tol + TINY32


def potential_host(atoms, h, z, ny, nx, cutoff=None):
    """V [ny, nx] in float64 and its error bound, every point (:func:`potential_at`)."""
    j, i = np.indices((int(ny), int(nx)))
    V, tol = potential_at(atoms, h, z, j, i, cutoff)
    return V.reshape(ny, nx), tol.reshape(ny, nx)


# ---- inputs ---------------------------------------------------------------------------------------

def random_atoms(rng, A, ny, nx, h, z, margin=2.0, dz=(MIN_DZ, 4.0)) -> np.ndarray:
    """A atoms (x, y, z, q) float32: x and y over the slice's extent plus ``margin`` grid
    spacings each side, |z_atom − z| in ``dz`` grid spacings (either side of the plane), charges
    of either sign with 0.1 ≤ |q| ≤ 1."""
    h = float(h)
    atoms = np.empty((A, 4), np.float32)
    atoms[:, 0] = rng.uniform(-margin * h, (nx - 1 + margin) * h, A)
    atoms[:, 1] = rng.uniform(-margin * h, (ny - 1 + margin) * h, A)
    atoms[:, 2] = float(z) + rng.choice([-1.0, 1.0], A) * rng.uniform(dz[0] * h, dz[1] * h, A)
    atoms[:, 3] = rng.choice([-1.0, 1.0], A) * rng.uniform(0.1, 1.0, A)
    return atoms


def _slice_inputs(rng, size):
    ny, nx, A = (int(v) for v in size[:3])
    h = np.float32(rng.uniform(0.4, 1.2))
    z = np.float32(rng.uniform(-6.0, 6.0))
    return {"atoms": random_atoms(rng, A, ny, nx, h, z), "h": h, "z": z}


def _speed_inputs(rng, size):
    return _slice_inputs(rng, size)          # 10^4 atoms: already fast


def _slice_label(size) -> str:
    ny, nx, A = (int(v) for v in size[:3])
    text = f"a {ny} × {nx} slice (rows × columns), {A} atom{'s' * (A != 1)}"
    return text + (f", coarsening factor {int(size[3])}" if len(size) > 3 else "")


def _slice_outputs(size):
    return {"V": ((int(size[0]), int(size[1])), np.float32)}


def _slice_blocks(size, block):
    bx, by = block
    return ((int(size[1]) + bx - 1) // bx, (int(size[0]) + by - 1) // by)


# ---- CPU baselines ---------------------------------------------------------------------------------

def _numpy_potential(atoms, h, z, V, chunk=256):
    """Broadcast over the slice, a chunk of atoms at a time, in float32."""
    ny, nx = V.shape
    x = (np.arange(nx, dtype=np.float32) * np.float32(h))[None, None, :]
    y = (np.arange(ny, dtype=np.float32) * np.float32(h))[None, :, None]
    V[...] = 0
    for s in range(0, len(atoms), chunk):
        a = atoms[s:s + chunk]
        dz2 = (np.float32(z) - a[:, 2]) ** 2
        r2 = (x - a[:, 0, None, None]) ** 2 + ((y - a[:, 1, None, None]) ** 2 + dz2[:, None, None])
        V += (a[:, 3, None, None] / np.sqrt(r2)).sum(axis=0)


def _make_loop(parallel: bool):
    import numba

    @numba.njit(parallel=parallel, fastmath=False, cache=False)
    def potential(atoms, h, z, V):
        ny, nx = V.shape
        for j in numba.prange(ny):
            y = np.float32(j) * h
            for i in range(nx):
                x = np.float32(i) * h
                acc = np.float32(0.0)
                for a in range(atoms.shape[0]):
                    dx = x - atoms[a, 0]
                    dy = y - atoms[a, 1]
                    dz = z - atoms[a, 2]
                    acc += atoms[a, 3] / np.sqrt(dx * dx + dy * dy + dz * dz)
                V[j, i] = acc
    return potential


_serial_loop = njit_on_first_call(lambda: _make_loop(False))
_parallel_loop = njit_on_first_call(lambda: _make_loop(True))


def _serial(atoms, h, z, V):
    _serial_loop(atoms, np.float32(h), np.float32(z), V)


def _parallel(atoms, h, z, V):
    _parallel_loop(atoms, np.float32(h), np.float32(z), V)


BASELINES = {
    "numpy": Baseline("NumPy broadcast, 256 atoms at a time (float32)", _numpy_potential,
                      at_speed_size=False),
    "serial": Baseline("numba.njit loops over points and atoms (1 core)", _serial,
                       at_speed_size=False),
    "parallel": Baseline(f"numba.njit parallel over rows ({cores()} cores)", _parallel),
}


def slice_flops(size) -> int:
    """11 per atom-point pair: 3 subtractions, 3 multiplications and 2 additions for r², a
    square root and a division (each counted as one, though a GPU spends several instructions
    on each in IEEE precision), and the addition into the sum."""
    ny, nx, A = (int(v) for v in size[:3])
    return FLOPS_PER_PAIR * ny * nx * A


def slice_bytes(size) -> int:
    """The least a kernel moves: the atoms read once (16 bytes each), V written once."""
    ny, nx, A = (int(v) for v in size[:3])
    return 16 * A + 4 * ny * nx


def slice_sample(inputs, idx, shape):
    """V's expected values and bounds at flat indices ``idx`` of a slice of ``shape`` only."""
    j, i = np.unravel_index(np.asarray(idx, np.int64), shape)
    V, tol = potential_at(inputs["atoms"], inputs["h"], inputs["z"], j, i, step=128)
    return {"V": V}, {"V": tol}


def gather_sample(inputs, idx):
    """The speed test's samples: the speed test always runs the slice :data:`SPEED_SLICE`."""
    return slice_sample(inputs, idx, SPEED_SLICE[:2])


# ---- 18.1 gather: a thread per grid point -----------------------------------------------------------

def _gather_spec(atoms, h, z, **launch):
    """Not called: :class:`_SliceProblem` computes V and its bound in one pass."""
    raise NotImplementedError


def _slice_tolerance(inputs, expected):
    """The bound of :func:`potential_at` over V's shape (with the case's cutoff, if any)."""
    ny, nx = expected["V"].shape
    return {"V": potential_host(inputs["atoms"], inputs["h"], inputs["z"], ny, nx,
                                inputs.get("cutoff"))[1]}


class _SliceProblem(Problem):
    """A problem over a slice: its spec and tolerance come from one float64 pass
    (:func:`potential_host`), with the cutoff where the case has one. ``unwritten_hint``: the
    hint for elements never stored, where the generic one (x and y swapped) would mislead."""

    unwritten_hint = ""

    def judge(self, case, outcome, show_inputs=True):
        verdict = super().judge(case, outcome, show_inputs)
        if self.unwritten_hint and "never written" in verdict.message:
            verdict.hint = self.unwritten_hint
        if outcome.error and "coalesced layout" in outcome.error:
            verdict.hint = ("the values are right, the layout is not: give thread x of a block "
                            "the columns base + k·blockDim.x (k < coarsen), base = blockIdx.x · "
                            "blockDim.x · coarsen + threadIdx.x.")
        return verdict

    def expected(self, case):
        return self.reference_values(case)[0]

    def reference_values(self, case):
        if "expected" not in case.memo:
            ny, nx = int(case.size[0]), int(case.size[1])
            inp = case.inputs
            V, tol = potential_host(inp["atoms"], inp["h"], inp["z"], ny, nx, inp.get("cutoff"))
            case.memo["expected"], case.memo["tolerance"] = {"V": V}, {"V": tol}
        return case.memo["expected"], case.memo["tolerance"]


def _gather_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["atoms"], outputs["V"], inputs["h"], inputs["z"])


# (ny, nx, A). Visible: 9 × 21 with 13 atoms (partial blocks both ways, ny ≠ nx), a single row,
# a single atom. Hidden: a 12 × 37 slice of 40 atoms (4 times the largest visible in pairs), a
# column, two random shapes. The simulator pays per thread and per atom: few of each.
GATHER_CPU_SIZES = Sizes(visible=((9, 21, 13), (1, 30, 7), (5, 6, 1)),
                         hidden=((12, 37, 40), (17, 1, 9)), hidden_random=(2, 2, 24))
GATHER_GPU_SIZES = Sizes(visible=((300, 513, 700),) + GATHER_CPU_SIZES.visible,
                         hidden=GATHER_CPU_SIZES.hidden, hidden_random=(3, 2, 200),
                         speed=SPEED_SLICE)

dcs_gather = _SliceProblem(
    "dcs_gather", title="Direct Coulomb summation, gathered: a thread per grid point",
    spec=_gather_spec, make_inputs=_slice_inputs, outputs=_slice_outputs,
    tolerance=_slice_tolerance, launch=_gather_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=_slice_blocks,
    cpu_sizes=GATHER_CPU_SIZES, gpu_sizes=GATHER_GPU_SIZES, bytes_moved=slice_bytes,
    flops=slice_flops, baselines=BASELINES, reference=reference_gather,
    speed_inputs=_speed_inputs, sample_spec=gather_sample,
    speed_launch=lambda size: (_slice_blocks(size, SPEED_BLOCK), SPEED_BLOCK),
    # The reference is the same algorithm (IEEE square root and division, no fastmath): a plain
    # solution runs at its speed; the bar leaves room for another order of the arithmetic. The
    # parallel njit loop on every host core is the baseline (to be calibrated on the H200).
    speed=SpeedBar(min_fraction_of_reference=0.5, baseline="parallel", min_speedup=10.0),
    size_label=_slice_label,
    value_hint=("V[j, i] = Σ over atoms a of q_a / √((i·h − x_a)² + (j·h − y_a)² + (z − z_a)²), "
                "with atoms[a] = (x_a, y_a, z_a, q_a): column i goes with x (blockIdx.x, "
                "threadIdx.x), row j with y, and r is a distance (the square root of the sum of "
                "three squares, dz included), not its square. Wrong only in the last rows or "
                "columns? Guard with j < V.shape[0] and i < V.shape[1]."),
)


# ---- 18.2 coarsened, coalesced ---------------------------------------------------------------------

def _coarse_inputs(rng, size):
    inputs = _slice_inputs(rng, size)
    inputs["coarsen"] = int(size[3])
    return inputs


def _coarse_blocks(size, block):
    bx, by = block
    F = int(size[3])
    return ((int(size[1]) + bx * F - 1) // (bx * F), (int(size[0]) + by - 1) // by)


LAYOUT_HINT = ("in the coalesced layout, thread x of a block stores the columns base + x, base + x "
               "+ blockDim.x, ..., base + x + (coarsen − 1)·blockDim.x, with base = blockIdx.x · "
               "blockDim.x · coarsen: at each step the threads of a warp store neighbouring "
               "columns. A thread's points next to each other (x·coarsen + k) are the "
               "uncoalesced layout of PMPP §18.3")


def coalesced_writer(j, i, block, coarsen):
    """(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y) that stores V[j, i] in the coalesced
    layout."""
    bx, by = block
    return (i // (bx * coarsen), j // by, (i % (bx * coarsen)) % bx, j % by)


def _coarse_launch(kernel, inputs, outputs, case):
    """Launch, and in CPU mode check who stored each element (a recording of the launch's
    accesses to V): the values of the two layouts are the same, only the stores tell them apart.
    On a GPU only the values are judged."""
    from autograder.machine import device
    args = (inputs["atoms"], outputs["V"], inputs["h"], inputs["z"], int(inputs["coarsen"]))
    if device.current().is_gpu:
        kernel[case.blocks, case.threads](*args)
        return
    from autograder.machine.simulator import races
    with races.record() as accesses:
        kernel[case.blocks, case.threads](*args)
    F = int(inputs["coarsen"])
    for acc in accesses:
        if acc.space != "global" or acc.array != "V" or acc.kind != "write" or len(acc.element) != 2:
            continue
        j, i = acc.element
        want = coalesced_writer(j, i, case.threads, F)
        got = (acc.block[0], acc.block[1], acc.thread[0], acc.thread[1])
        if got != want:
            raise AssertionError(
                f"V[{j}, {i}] was stored by thread ({got[2]}, {got[3]}) of block ({got[0]}, "
                f"{got[1]}), not by thread ({want[2]}, {want[3]}) of block ({want[0]}, "
                f"{want[1]}): {LAYOUT_HINT}")


COARSE_CPU_SIZES = Sizes(visible=((5, 37, 12, 4), (3, 20, 9, 3), (2, 1, 5, 2)),
                         hidden=((7, 45, 20, 8), (4, 50, 10, 1), (6, 29, 15, 5)))
COARSE_GPU_SIZES = Sizes(visible=((300, 1029, 500, 4),) + COARSE_CPU_SIZES.visible,
                         hidden=COARSE_CPU_SIZES.hidden + ((77, 2100, 300, 8),))

class _CoarsenedProblem(_SliceProblem):
    """The coarsened exercise: the layout of a thread's points is judged by recording who stored
    each element, which only CPU mode can do. Graded on a GPU, the judge runs the cases of the
    other warp size (``portable_warp_sizes``: the layout is the same at 32 or 64) in a CPU-mode
    student process; those cases are the CPU hidden ones, so the layout is judged there too."""

    portable_warp_sizes = (32, 64)

    def portability_cases(self, warp: int = 64, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(self.case_seed(True) if seed is None else seed)
        cases = []
        for size, block in zip(COARSE_CPU_SIZES.hidden, self.block_size_cycle(rng, 3)):
            case = Case(size=size, inputs=_coarse_inputs(rng, size), label=_slice_label(size))
            case.threads, case.blocks = block, _coarse_blocks(size, block)
            cases.append(case)
        return cases


dcs_coarsened = _CoarsenedProblem(
    "dcs_coarsened",
    title="Coarsened DCS: several points per thread, a block-width apart (coalesced stores)",
    spec=_gather_spec, make_inputs=_coarse_inputs, outputs=_slice_outputs,
    tolerance=_slice_tolerance, launch=_coarse_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=_coarse_blocks,
    cpu_sizes=COARSE_CPU_SIZES, gpu_sizes=COARSE_GPU_SIZES, reference=reference_coarsened,
    race_check_outputs=True, size_label=_slice_label, flops=slice_flops, bytes_moved=slice_bytes,
    value_hint=("each of a thread's `coarsen` points is a whole sum over the atoms, as in 18.1; "
                "its columns are base + k·blockDim.x for k < coarsen, base = blockIdx.x · "
                "blockDim.x · coarsen + threadIdx.x, and the grid has just enough blocks in x "
                "for blockDim.x · coarsen columns each: the last block's last points fall past "
                "the slice (store only those with i < V.shape[1]) and no point is left out. "
                f"coarsen is at most COARSEN_MAX = {COARSEN_MAX}."),
)
dcs_coarsened.unwritten_hint = (
    "the grid has gridDim.x = ceil(V.shape[1] / (blockDim.x · coarsen)) blocks in x: the last "
    "block covers the slice's last columns and runs past its end. Every thread stores each of its "
    "points k < coarsen at column base + k·blockDim.x while that column is < V.shape[1], so that "
    "no point is left out (do not skip a partial block, and do not stop at the first column "
    "past the end of a thread's own range only).")


# ---- 18.3 cutoff summation over bins ----------------------------------------------------------------

def bin_atoms(atoms, bin_size, nbx, nby):
    """Sort atoms into nby × nbx square bins of side ``bin_size`` over x and y (bin (by, bx)
    holds 0 ≤ x/bin_size − bx < 1, clipped to the edge bins): (the atoms in bin order, row by
    row, and bin_start int32 [nby, nbx + 1]: bin (by, bx)'s atoms are rows bin_start[by, bx]
    to bin_start[by, bx + 1] − 1, and a bin row's bins are consecutive)."""
    atoms = np.asarray(atoms, np.float32)
    bx = np.clip(np.floor(atoms[:, 0].astype(np.float64) / float(bin_size)), 0, nbx - 1).astype(int)
    by = np.clip(np.floor(atoms[:, 1].astype(np.float64) / float(bin_size)), 0, nby - 1).astype(int)
    key = by * nbx + bx
    order = np.argsort(key, kind="stable")
    counts = np.bincount(key, minlength=nby * nbx).reshape(nby, nbx)
    flat_start = np.concatenate([[0], np.cumsum(counts.reshape(-1))])
    bin_start = np.empty((nby, nbx + 1), np.int32)
    for r in range(nby):
        bin_start[r, :] = flat_start[r * nbx:(r + 1) * nbx + 1]
    return np.ascontiguousarray(atoms[order]), bin_start


def bins_for(ny, nx, h, bin_size) -> tuple[int, int]:
    """(nby, nbx): enough bins to cover the slice's extent, (nx − 1)·h by (ny − 1)·h."""
    return (int(np.floor((ny - 1) * float(h) / float(bin_size))) + 1,
            int(np.floor((nx - 1) * float(h) / float(bin_size))) + 1)


def cutoff_case(rng, size, cutoff=None, bin_ratio=None):
    """A slice with atoms inside its extent (the bins cover it), 0.75 to 2.5 grid spacings
    off the plane, a cutoff of 2 to 4 spacings and bins of 0.5, 1 or 1.7 cutoffs."""
    ny, nx, A = (int(v) for v in size[:3])
    h = np.float32(rng.uniform(0.4, 1.2))
    z = np.float32(rng.uniform(-6.0, 6.0))
    atoms = random_atoms(rng, A, ny, nx, h, z, margin=0.0, dz=(MIN_DZ, 2.5))
    cutoff = np.float32(cutoff if cutoff is not None else rng.uniform(2.0, 4.0) * float(h))
    ratio = bin_ratio if bin_ratio is not None else float(rng.choice([0.5, 1.0, 1.7]))
    bin_size = np.float32(ratio * float(cutoff))
    nby, nbx = bins_for(ny, nx, h, bin_size)
    binned, bin_start = bin_atoms(atoms, bin_size, nbx, nby)
    return {"atoms": binned, "bin_start": bin_start, "h": h, "z": z, "cutoff": cutoff,
            "bin_size": bin_size}


def _cutoff_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["atoms"], inputs["bin_start"], outputs["V"],
                                      inputs["h"], inputs["z"], inputs["cutoff"],
                                      inputs["bin_size"])


def _cutoff_must_read(case):
    """Every atom's position (an atom beyond the cutoff of every point has its charge unread);
    bin_start only where a kernel looks (a row's range reads its two ends)."""
    need = np.ones(case.inputs["atoms"].shape, bool)
    need[:, 3] = False
    return {"atoms": need, "bin_start": False}


CUTOFF_CPU_SIZES = Sizes(visible=((11, 23, 40), (6, 31, 25), (1, 9, 6)),
                         hidden=((16, 40, 90), (19, 3, 30)), hidden_random=(2, 4, 26))
CUTOFF_GPU_SIZES = Sizes(visible=((300, 517, 2000),) + CUTOFF_CPU_SIZES.visible,
                         hidden=CUTOFF_CPU_SIZES.hidden, hidden_random=(3, 4, 300))

dcs_cutoff = _SliceProblem(
    "dcs_cutoff", title="Cutoff summation: only the atoms within the cutoff, found by bins",
    spec=_gather_spec, make_inputs=cutoff_case, outputs=_slice_outputs,
    tolerance=_slice_tolerance, launch=_cutoff_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=_slice_blocks,
    cpu_sizes=CUTOFF_CPU_SIZES, gpu_sizes=CUTOFF_GPU_SIZES, reference=reference_cutoff,
    must_read=_cutoff_must_read, size_label=_slice_label,
    value_hint=("V[j, i] = Σ of q_a / r_a over the atoms with r_a < cutoff (r in 3-D, dz "
                "included). The bins are a superset: test each atom's own distance, not only "
                "its bin's. Visit bin columns floor((x − cutoff) / bin_size) to floor((x + "
                "cutoff) / bin_size) inclusive (both ends), and the same for rows, each clipped "
                "to the bins that exist (0 .. bin_start.shape[1] − 2 and 0 .. "
                "bin_start.shape[0] − 1); bin (by, bx)'s atoms are atoms[bin_start[by, bx] : "
                "bin_start[by, bx + 1]]."),
)


# ---- 18.4 predict: the pairs binning visits ----------------------------------------------------------

def _work_spec(nx, ny, h, atoms, cutoff, bin_size):
    full = nx * ny * atoms
    visited = full * (2 * cutoff + bin_size) ** 2 / (nx * h * ny * h)
    return {"pairs_full": full, "pairs_binned": visited,
            "useful_fraction": np.pi * cutoff ** 2 / (2 * cutoff + bin_size) ** 2}


def _work_inputs(rng, count):
    nx = rng.integers(16, 4097, count).astype(np.float64)
    ny = rng.integers(16, 4097, count).astype(np.float64)
    h = rng.uniform(0.1, 1.0, count)
    atoms = rng.integers(100, 10 ** 6, count).astype(np.float64)
    cutoff = rng.uniform(4.0, 16.0, count) * h
    bin_size = rng.uniform(0.25, 2.0, count) * cutoff
    # The first cases: the notebook's question (a 1024 × 1024 slice, h = 0.5, 10^4 atoms, a
    # cutoff of 12 and bins of 12), then bins half as wide, then bins of a grid spacing.
    first = np.array([[1024, 1024, 0.5, 1e4, 12.0, 12.0], [1024, 1024, 0.5, 1e4, 12.0, 6.0],
                      [512, 256, 0.25, 5e3, 4.0, 0.25]])
    k = min(count, len(first))
    nx[:k], ny[:k], h[:k], atoms[:k], cutoff[:k], bin_size[:k] = first[:k].T
    return {"nx": nx, "ny": ny, "h": h, "atoms": atoms, "cutoff": cutoff, "bin_size": bin_size}


def _work_tolerance(inputs, expected):
    return {k: 64 * U64 * np.abs(v) for k, v in expected.items()}


binned_work = formula_problem(
    "binned_work", title="Predict: the atom-point pairs a cutoff with bins visits",
    function="binned_work",
    args=(("nx", int), ("ny", int), ("h", float), ("atoms", int), ("cutoff", float),
          ("bin_size", float)),
    results=("pairs_full", "pairs_binned", "useful_fraction"), spec=_work_spec,
    make_inputs=_work_inputs, tolerance=_work_tolerance,
    sizes=Sizes(visible=(3,), hidden=(200,)),
    value_hint=("pairs_full: every point against every atom. pairs_binned: a point visits the "
                "bins its square of side 2·cutoff touches, on average (2·cutoff / bin_size + 1) "
                "bins per axis, each holding the atoms of a bin_size × bin_size square at the "
                "density atoms / (nx·h · ny·h); edges ignored. useful_fraction: the atoms within "
                "the cutoff's disc among those visited, π·cutoff² over the visited area."),
)
