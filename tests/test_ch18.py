"""Chapter 18: do the potential map's checks pass correct kernels written several ways (a float64
accumulator, dy² + dz² reused, a bin-by-bin loop) and fail the classic bugs (x and y swapped, dz
forgotten, r² for r, the coarsened tail dropped, a thread's points side by side, a cutoff tested on
the bin only, the last bin left out) with a verdict that says what is wrong? Are the float64 specs
right (against plain loops), is the bound tight enough to fail a wrong answer just above it, does
the speed test's sample agree with the whole spec, and does the measuring cell run every way?"""

import math

import numpy as np
import pytest
from numba import cuda, float32, float64

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import assert_judged, verdict_text

ch18 = ag.problems.ch18
CPU = not ag.backend.is_gpu


# ---- the specs ---------------------------------------------------------------------------------------

def _loops(atoms, h, z, ny, nx, cutoff=None):
    V = np.zeros((ny, nx))
    for j in range(ny):
        for i in range(nx):
            for x, y, za, q in atoms.astype(np.float64):
                r = math.sqrt((i * float(h) - x) ** 2 + (j * float(h) - y) ** 2
                              + (float(z) - za) ** 2)
                if cutoff is None or r < float(cutoff):
                    V[j, i] += q / r
    return V


def test_specs_agree_with_plain_loops():
    rng = np.random.default_rng(1)
    atoms = ch18.random_atoms(rng, 9, 4, 7, 0.6, 1.5)
    V, tol = ch18.potential_host(atoms, np.float32(0.6), np.float32(1.5), 4, 7)
    assert np.allclose(V, _loops(atoms, np.float32(0.6), np.float32(1.5), 4, 7), rtol=1e-12)
    assert np.all(tol > 0) and np.all(tol < 1e-4 * np.abs(V).max())
    case = ch18.cutoff_case(rng, (5, 9, 30), cutoff=1.3, bin_ratio=1.0)
    inp = case
    Vc, _ = ch18.potential_host(inp["atoms"], inp["h"], inp["z"], 5, 9, inp["cutoff"])
    assert np.allclose(Vc, _loops(inp["atoms"], inp["h"], inp["z"], 5, 9, inp["cutoff"]),
                       rtol=1e-12, atol=1e-12)
    assert not np.allclose(Vc, _loops(inp["atoms"], inp["h"], inp["z"], 5, 9))
    # Every atom lies in its own bin, and the bins of a row are consecutive.
    start = inp["bin_start"]
    assert start[0, 0] == 0 and start[-1, -1] == len(inp["atoms"])
    assert np.all(start[1:, 0] == start[:-1, -1]) and np.all(np.diff(start, axis=1) >= 0)
    for by in range(start.shape[0]):
        for bx in range(start.shape[1] - 1):
            a = inp["atoms"][start[by, bx]:start[by, bx + 1]].astype(np.float64)
            assert np.all(np.clip(np.floor(a[:, 0] / inp["bin_size"]), 0, start.shape[1] - 2) == bx)


def test_the_bound_is_a_float32_sum_and_can_fail():
    """The worst order of float32 terms passes; V plus 1.01 bound fails, 0.99 passes; one atom
    left out fails."""
    case = ch18.dcs_gather.cases()[0]
    expected, tol = ch18.dcs_gather.reference_values(case)
    V, T = expected["V"], tol["V"]
    atoms, h, z = case.inputs["atoms"], case.inputs["h"], case.inputs["z"]
    ny, nx = V.shape
    worst = np.zeros((ny, nx), np.float32)
    short = np.zeros((ny, nx))
    for j in range(ny):
        for i in range(nx):
            x, y = np.float32(i) * h, np.float32(j) * h
            d = atoms[:, :3] - np.array([x, y, z], np.float32)
            terms = atoms[:, 3] / np.sqrt((d * d).sum(1, dtype=np.float32))
            acc = np.float32(0)
            for t in sorted(terms, key=abs):
                acc = np.float32(acc + t)
            worst[j, i] = acc
            short[j, i] = float(acc) - float(terms[-1])
    assert np.all(np.abs(worst - V) <= T)
    assert np.all(np.abs(short - V) > T)
    err = np.where(np.arange(V.size).reshape(V.shape) % 2, 1.01, 0.99) * T
    assert np.array_equal(np.abs((V + err) - V) > T, err > T)


def test_the_speed_sample_agrees_with_the_whole_spec():
    rng = np.random.default_rng(4)
    inputs = {"atoms": ch18.random_atoms(rng, 30, 6, 11, 0.7, 0.0), "h": np.float32(0.7),
              "z": np.float32(0.0)}
    V, tol = ch18.potential_host(inputs["atoms"], inputs["h"], inputs["z"], 6, 11)
    idx = np.array([0, 7, 40, V.size - 1])
    expected, bound = ch18.slice_sample(inputs, idx, (6, 11))
    assert np.allclose(expected["V"], V.reshape(-1)[idx], rtol=1e-12)
    assert np.allclose(bound["V"], tol.reshape(-1)[idx], rtol=1e-12)


def test_the_boundary_rule_covers_an_atom_at_the_cutoff():
    """An atom at the cutoff to within float32's rounding counts either way."""
    atoms = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, -2.0, 0.5]], np.float32)
    V, tol = ch18.potential_at(atoms, np.float32(1), np.float32(0), [0], [0], cutoff=np.float32(2.0))
    assert V[0] == pytest.approx(1.0) and tol[0] >= 0.25        # the atom at r = 2 exactly


# ---- 18.1 gather -------------------------------------------------------------------------------------

def _gather(swap=False, no_dz=False, squared=False, wide=False):
    @cuda.jit
    def kernel(atoms, V, h, z):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if j < V.shape[0] and i < V.shape[1]:
            x, y = (float32(j) * h, float32(i) * h) if swap else (float32(i) * h, float32(j) * h)
            acc = float64(0.0) if wide else float32(0.0)
            for a in range(atoms.shape[0]):
                dx = x - atoms[a, 0]
                dy = y - atoms[a, 1]
                dz = float32(0.0) if no_dz else z - atoms[a, 2]
                r2 = dx * dx + dy * dy + dz * dz
                acc += atoms[a, 3] / (r2 if squared else math.sqrt(r2))
            V[j, i] = acc
    return kernel


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _gather(), None),
    ("float64_sum", _gather(wide=True), None),
    ("x_y_swapped", _gather(swap=True), "column i goes with x"),
    ("dz_forgotten", _gather(no_dz=True), "dz included"),
    ("r_squared", _gather(squared=True), "not its square"),
])
def test_gather_verdict(name, fn, expected):
    assert_judged(ch18.dcs_gather, fn, expected)


def test_gather_host_copy_is_caught():
    class HostSum:
        def __getitem__(self, launch):
            def run(atoms, V, h, z):
                ny, nx = V.shape
                V.copy_to_device(ch18.potential_host(atoms.copy_to_host(), h, z, ny, nx)[0]
                                 .astype(np.float32))
            return run
    failure = verdict_text(ch18.dcs_gather, HostSum(), hidden=False)
    assert failure is not None and "host" in failure, failure


# ---- 18.2 coarsened --------------------------------------------------------------------------------

def _coarse(consecutive=False, drop_tail=False):
    @cuda.jit
    def kernel(atoms, V, h, z, coarsen):
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if consecutive:
            base, step = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * coarsen, 1
        else:
            base, step = cuda.blockIdx.x * cuda.blockDim.x * coarsen + cuda.threadIdx.x, \
                cuda.blockDim.x
        if j < V.shape[0]:
            for k in range(coarsen):
                i = base + k * step
                if drop_tail and (cuda.blockIdx.x + 1) * cuda.blockDim.x * coarsen > V.shape[1]:
                    return                       # "the last block is partial: skip it"
                if i < V.shape[1]:
                    acc = float32(0.0)
                    for a in range(atoms.shape[0]):
                        dx = float32(i) * h - atoms[a, 0]
                        dy = float32(j) * h - atoms[a, 1]
                        dz = z - atoms[a, 2]
                        acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
                    V[j, i] = acc
    return kernel


@pytest.mark.parametrize("name,fn,expected", [
    ("reference", ch18.reference_coarsened(), None),
    ("points_outer", _coarse(), None),
    ("consecutive", _coarse(consecutive=True), "uncoalesced layout"),
    ("tail_dropped", _coarse(drop_tail=True), "no point is left out"),
])
def test_coarsened_verdict(name, fn, expected):
    if name == "consecutive" and not CPU:
        pytest.skip("the layout is checked in CPU mode, where the stores are recorded")
    assert_judged(ch18.dcs_coarsened, fn, expected)


def test_the_layout_is_judged_in_cpu_mode_cases_a_gpu_grader_adds():
    """On a GPU the judge runs the other warp size's cases in CPU mode: small ones, where the
    recorded stores hold a kernel to the coalesced layout."""
    cases = ch18.dcs_coarsened.portability_cases(64, seed=5)
    assert [c.size for c in cases] == list(ch18.dcs_coarsened.cpu_sizes.hidden)
    if CPU:
        outcome = ch18.dcs_coarsened.run(_coarse(consecutive=True), cases[0])
        assert outcome.error and "uncoalesced layout" in outcome.error
        assert ch18.dcs_coarsened.run(_coarse(), cases[0]).error is None


def test_the_coalesced_writer():
    # block 8 wide, coarsen 4: columns 0..31 in block 0; column 9 is thread 1's second point.
    assert ch18.coalesced_writer(3, 9, (8, 4), 4) == (0, 0, 1, 3)
    assert ch18.coalesced_writer(5, 33, (8, 4), 4) == (1, 1, 1, 1)


# ---- 18.3 cutoff -------------------------------------------------------------------------------------

def _cutoff(bin_only=False, short_range=False, per_bin=False):
    @cuda.jit
    def kernel(atoms, bin_start, V, h, z, cutoff, bin_size):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if j < V.shape[0] and i < V.shape[1]:
            x, y = float32(i) * h, float32(j) * h
            nby, nbx = bin_start.shape[0], bin_start.shape[1] - 1
            bx0 = max(int(math.floor((x - cutoff) / bin_size)), 0)
            bx1 = min(int(math.floor((x + cutoff) / bin_size)), nbx - 1)
            by0 = max(int(math.floor((y - cutoff) / bin_size)), 0)
            by1 = min(int(math.floor((y + cutoff) / bin_size)), nby - 1)
            if short_range:
                bx1 -= 1                                    # range(lo, hi): the last bin left out
            acc = float32(0.0)
            for by in range(by0, by1 + 1):
                for bx in range(bx0, bx1 + 1):
                    start = bin_start[by, bx]
                    end = bin_start[by, bx + 1] if per_bin else bin_start[by, bx + 1]
                    for a in range(start, end):
                        dx = x - atoms[a, 0]
                        dy = y - atoms[a, 1]
                        dz = z - atoms[a, 2]
                        r2 = dx * dx + dy * dy + dz * dz
                        if bin_only or r2 < cutoff * cutoff:
                            acc += atoms[a, 3] / math.sqrt(r2)
            V[j, i] = acc
    return kernel


@pytest.mark.parametrize("name,fn,expected", [
    ("reference", ch18.reference_cutoff(), None),
    ("bin_by_bin", _cutoff(per_bin=True), None),
    ("bin_only", _cutoff(bin_only=True), "own distance"),
    ("last_bin_left_out", _cutoff(short_range=True), "inclusive (both ends)"),
])
def test_cutoff_verdict(name, fn, expected):
    assert_judged(ch18.dcs_cutoff, fn, expected)


# ---- 18.4 the work binning saves -----------------------------------------------------------------

def _work_ok(nx, ny, h, atoms, cutoff, bin_size):
    full = nx * ny * atoms
    side = 2 * cutoff + bin_size
    return full, full * side * side / (nx * h * ny * h), math.pi * cutoff ** 2 / side ** 2


def _work_no_plus_one(nx, ny, h, atoms, cutoff, bin_size):
    full = nx * ny * atoms                                 # the square of side 2·cutoff only
    return full, full * (2 * cutoff) ** 2 / (nx * h * ny * h), math.pi / 4


@pytest.mark.parametrize("fn,expected", [(_work_ok, None), (_work_no_plus_one, "pairs_binned")])
def test_work_verdict(fn, expected):
    assert_judged(ch18.binned_work, fn, expected)


# ---- the course's kernels, the notebook's helpers -----------------------------------------------------

def test_course_kernels_pass_and_scatter_needs_atomics():
    for problem in ch18.PROBLEMS[:3]:
        assert verdict_text(problem, problem.reference_kernel(), hidden=False) is None
    assert ch18.run_scatter(ch18.reference_scatter())["right"]

    @cuda.jit
    def scatter_plain(atoms, V, h, z):
        a = cuda.grid(1)
        if a < atoms.shape[0]:
            for j in range(V.shape[0]):
                for i in range(V.shape[1]):
                    dx = float32(i) * h - atoms[a, 0]
                    dy = float32(j) * h - atoms[a, 1]
                    dz = z - atoms[a, 2]
                    V[j, i] += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
    if CPU:
        with pytest.raises(Exception, match="global-memory race"):
            ch18.run_scatter(scatter_plain)


def test_cutoff_error_falls_with_the_radius_and_cpu_baselines_run():
    rows = ch18.cutoff_error(radii=(1.0, 4.0), size=(6, 8, 30))
    assert rows[0]["atoms_per_point"] < rows[1]["atoms_per_point"]
    assert rows[1]["max_error"] < rows[0]["max_error"]
    rows = ch18.time_cpu_potential((3, 5, 7))
    assert len(rows) == 3 and all(r["right"] and r["ms"] > 0 for r in rows), rows
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch18.measure()
    rows = [{"label": "scatter", "size": (256, 256, 2000), "ms": 9.0},
            {"label": "gather", "size": list(ch18.SPEED_SLICE), "ms": 3.0}]
    assert [r["label"] for r in ch18.chart(rows)["rows"]] == ["gather"]   # one slice's bars


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """Every course kernel of the chapter compiles for compute capability 9.0."""
    assert_compiles_for_h200("ch18", (
        "r.cuda, r.float32 = cuda, numba.float32\n"
        "a2 = types.float32[:, ::1]; f = types.float32; i = types.int64\n"
        "b2 = types.int32[:, ::1]\n"
        "k = r._dcs_kernels.__wrapped__()\n"
        "sigs = [(k['scatter'], (a2, a2, f, f)), (k['gather'], (a2, a2, f, f)),\n"
        "        (k['coarsened'], (a2, a2, f, f, i)), (k['cutoff'], (a2, b2, a2, f, f, f, f)),\n"
        "        (r.reference_coarsened_consecutive.__wrapped__(), (a2, a2, f, f, i))]\n"), 5)


def test_the_measuring_cell_runs_every_way_and_checks_each_result(monkeypatch):
    """The GPU measuring cell's launches, run once each in the simulator on a small slice (its
    timer replaced by one call): every way computes V (checked), and a kernel of a wrong kind is
    refused with a sentence."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    rows = ch18.measure({"mine": ("gather", _gather()), "mine swapped": ("gather",
                                                                         _gather(swap=True))},
                        size=(5, 40, 12), radii=(1.5, 3.0), coarsen=2, scatter_size=(3, 4, 5),
                        repeats=1)
    assert len(rows) == 1 + 1 + 2 + 2 + 2, rows
    assert [r["right"] for r in rows] == [True] * 7 + [False], rows
    with pytest.raises(ValueError, match="'gather', 'coarsened' or 'cutoff'"):
        ch18.measure({"x": ("scatter", _gather())}, size=(2, 3, 2), radii=(1.0,),
                     scatter_size=(2, 2, 2))
