"""Chapter 20: is the grid split as the notebook says, is the per-slab float64 stencil the
single-process one, do real MPI ranks (``mpiexec``, 2 to 4 processes) run a learner's function
and bring back each rank's data, its errors (which rank, the traceback) and its hangs (where each
rank waited, every process ended), do the ranks refuse to share data through files, do the checks
pass the course's functions and fail the classic bugs with a verdict that names the rank and the
plane, and does the speed cell and the measuring cell do what they say without a GPU?

Launching ranks costs about a second each on CI's 2-core machine: the tests that launch use 2 or
3 ranks and one case each; the bank (tests/test_bank.py) grades the rest through the judge."""

import numpy as np
import psutil
import pytest
from mpi4py import MPI

import autograder as ag
from autograder.core.checks import Outcome
from autograder.core.spec import Case
from autograder.problems.ch08.specs import stencil7
from autograder.problems.ch20 import drivers, ranks, references, specs

from ptx import assert_compiles_for_h200

ch20 = ag.problems.ch20
CPU = not ag.backend.is_gpu


def _no_rank_left():
    """No process of ours (mpiexec, its proxy, a rank) outlives a launch."""
    left = [p for p in psutil.Process().children(recursive=True)
            if any("ranks.py" in part or "mpiexec" in part or "hydra" in part
                   for part in (p.cmdline() if p.is_running() else []))]
    assert not left, left


# ---- the decomposition and the spec (no ranks) --------------------------------------------------

@pytest.mark.parametrize("nz, count", [(9, 2), (7, 3), (6, 4), (13, 4), (4, 4)])
def test_planes_are_split_as_the_notebook_says(nz, count):
    bounds = ch20.split_planes(nz, count)
    sizes = [z1 - z0 for z0, z1 in bounds]
    assert bounds[0][0] == 0 and bounds[-1][1] == nz
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    assert sizes == sorted(sizes, reverse=True) and max(sizes) - min(sizes) <= 1
    assert sizes.count(nz // count + 1) == nz % count
    with pytest.raises(ValueError, match="cannot be split"):
        ch20.split_planes(count - 1, count)


def test_slabs_hold_their_own_planes_and_ghosts_only_where_given():
    grid = np.arange(7 * 2 * 3, dtype=np.float32).reshape(7, 2, 3)
    bare, ghosts = ch20.slabs_of(grid, 3), ch20.slabs_of(grid, 3, ghosts=True)
    for (z0, z1), b, g in zip(ch20.split_planes(7, 3), bare, ghosts):
        assert b.shape == (z1 - z0 + 2, 2, 3)
        assert np.array_equal(b[1:-1], grid[z0:z1]) and np.isnan(b[[0, -1]]).all()
        assert np.array_equal(g[0], grid[z0 - 1]) if z0 > 0 else np.isnan(g[0]).all()
        assert np.array_equal(g[-1], grid[z1]) if z1 < 7 else np.isnan(g[-1]).all()


@pytest.mark.parametrize("count", [2, 3, 4])
def test_each_slabs_stencil_is_the_single_process_one(count):
    """The per-rank float64 stencil (what every timed call is checked against) agrees with
    chapter 8's stencil of the whole grid, faces included; the tolerance is zero on the faces."""
    rng = np.random.default_rng(count)
    grid, c = rng.uniform(-1, 1, (9, 5, 6)).astype(np.float32), specs.coefficients(rng)
    whole = stencil7(grid, c)
    whole_tol = specs.stencil_tolerance(grid, c)
    for r, ((z0, z1), slab) in enumerate(zip(ch20.split_planes(9, count),
                                             ch20.slabs_of(grid, count, ghosts=True))):
        exact, tol = drivers.slab_expected(slab, c, r == 0, r == count - 1)
        assert np.allclose(exact, whole[z0:z1], rtol=0, atol=1e-12)
        assert np.allclose(tol, whole_tol[z0:z1] + (whole_tol[z0:z1] == 0) * tol.min())
    assert whole_tol[0].max() == 0 and whole_tol[:, 0].max() == 0 and whole_tol[4, 2, 3] > 0


@pytest.mark.parametrize("count", [1, 2, 3])
def test_the_timed_calls_answer_key_made_in_pieces_is_the_whole_slabs(monkeypatch, count):
    """SlabCheck (a few planes at a time, so four ranks of the speed grid fit the grader's memory)
    holds the same values and no smaller a tolerance as slab_expected on the whole slab; it
    passes the float32 rounding of the answer and fails a NaN or one point off by more than its
    tolerance, wherever the point is (first and last piece, a face)."""
    monkeypatch.setattr(drivers.SlabCheck, "PLANES", 2)
    rng = np.random.default_rng(10 + count)
    grid, c = rng.uniform(-1, 1, (11, 5, 6)).astype(np.float32), specs.coefficients(rng)
    for r, slab in enumerate(ch20.slabs_of(grid, count, ghosts=True)):
        first, last = r == 0, r == count - 1
        exact, tol = drivers.slab_expected(slab, c, first, last)
        key = drivers.SlabCheck(slab, c, first, last)
        assert np.array_equal(key.exact, exact)
        assert np.all(key.tol >= tol) and np.all(key.tol <= tol * (1 + 2**-22))
        got = exact.astype(np.float32)
        assert key.right(got)
        for z in (0, len(got) // 2, len(got) - 1):
            for bad in (np.nan, got[z, 2, 3] + 4 * float(key.tol[z, 2, 3]) + 1e-6):
                wrong = got.copy()
                wrong[z, 2, 3] = bad
                assert not key.right(wrong)
        if first:          # the grid's own face is copied: tolerance TINY32, so any change fails
            wrong = got.copy()
            wrong[0, 2, 3] += np.float32(1e-3)
            assert not key.right(wrong)


def test_the_exchange_bytes_are_the_surface_of_the_slabs():
    plan = ch20.exchange_bytes(ch20.SPEED_GRID, 4)
    assert ch20.SPEED_GRID == (514, 512, 512)           # the numbers the notebook's answer quotes
    assert [r["sent"] for r in plan["per_rank"]] == [2**20, 2 * 2**20, 2 * 2**20, 2**20]
    assert [r["planes"] for r in plan["per_rank"]] == [129, 129, 128, 128]
    assert plan["sent"] == 6 * 2**20 and plan["fraction"] == pytest.approx(6 / 514)
    assert ch20.exchange_bytes((514, 512, 512), 16)["fraction"] == pytest.approx(30 / 514)
    assert ch20.exchange_bytes((10, 2, 2), 1)["sent"] == 0


def test_the_expected_halo_is_the_neighbours_planes():
    case = ch20.halo_exchange.cases(hidden=True)[0]
    ranks_, nz = case.size[:2]
    expected = ch20.halo_exchange.expected(case)
    grid = case.inputs["grid"]
    for r, (z0, z1) in enumerate(ch20.split_planes(nz, ranks_)):
        if r > 0:
            assert np.array_equal(expected["lower"][r - 1], grid[z0 - 1])
        if r < ranks_ - 1:
            assert np.array_equal(expected["upper"][r], grid[z1])


def test_hidden_cases_cover_2_3_and_4_ranks_and_uneven_splits():
    cases = ch20.stencil_step.cases() + ch20.stencil_step.cases(hidden=True)
    assert {c.size[0] for c in cases} == {2, 3, 4}
    assert all(c.size[1] % c.size[0] for c in cases)
    assert any(min(z1 - z0 for z0, z1 in ch20.split_planes(c.size[1], c.size[0])) == 1
               for c in cases)


# ---- real ranks ---------------------------------------------------------------------------------

def _exchange(comm, slab):
    rank, size = comm.Get_rank(), comm.Get_size()
    below = rank - 1 if rank > 0 else MPI.PROC_NULL
    above = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    comm.Sendrecv(slab[-2], dest=above, recvbuf=slab[0], source=below)
    comm.Sendrecv(slab[1], dest=below, recvbuf=slab[-1], source=above)
    return np.array([rank, size])


def test_two_ranks_run_a_function_and_bring_back_their_slabs():
    grid = np.arange(5 * 2 * 3, dtype=np.float32).reshape(5, 2, 3)
    (s0, r0), (s1, r1) = ch20.run_ranks(_exchange, 2, grid)
    assert r0.tolist() == [0, 2] and r1.tolist() == [1, 2]
    assert np.array_equal(s0[-1], grid[3]) and np.array_equal(s1[0], grid[2])
    assert np.isnan(s0[0]).all() and np.isnan(s1[-1]).all()      # no neighbour: left as it was
    _no_rank_left()


def _raises_on_rank_one(comm, slab):
    if comm.Get_rank() == 1:
        raise ZeroDivisionError("rank one divides by zero")
    comm.Barrier()


def _waits_for_nobody(comm, slab):
    if comm.Get_rank() == 0:
        comm.Recv(slab[0], source=1, tag=5)        # rank 1 never sends


def _writes_a_file(comm, slab):
    np.save("/tmp/aag_rank_plane.npy", slab[1])


def test_a_rank_that_raises_is_named_with_its_traceback():
    with pytest.raises(ch20.RankFailed) as failed:
        ch20.run_ranks(_raises_on_rank_one, 2)
    assert failed.value.rank == 1
    text = str(failed.value)
    assert "rank 1 of 2 raised" in text and "ZeroDivisionError: rank one divides by zero" in text
    assert "_raises_on_rank_one" in text and "drivers.py" not in text
    _no_rank_left()


def test_a_hung_rank_is_stopped_and_says_where_it_waited():
    with pytest.raises(ch20.RankHung) as hung:
        ch20.run_ranks(_waits_for_nobody, 2, timeout=4)
    assert hung.value.ranks == [0]
    assert "rank 0 of 2 did not finish within 4 s" in str(hung.value)
    assert "_waits_for_nobody" in str(hung.value)
    _no_rank_left()


def test_ranks_share_data_through_mpi_only():
    with pytest.raises(ch20.RankFailed, match="may not open '/tmp/aag_rank_plane.npy'"):
        ch20.run_ranks(_writes_a_file, 2)
    _no_rank_left()


# ---- the checks ---------------------------------------------------------------------------------

def _halo_one_side(comm, slab):
    rank, size = comm.Get_rank(), comm.Get_size()
    comm.Sendrecv(slab[-2], dest=rank + 1 if rank < size - 1 else MPI.PROC_NULL, recvbuf=slab[0],
                  source=rank - 1 if rank > 0 else MPI.PROC_NULL)


def test_halo_check_passes_the_course_exchange_and_names_a_missing_side():
    ch20.halo_exchange.check(references.reference_exchange)
    with pytest.raises(ag.CheckFailed) as failed:
        ch20.halo_exchange.check(_halo_one_side)
    assert "rank 0's upper ghost plane" in str(failed.value)
    assert "rank 1's first plane" in str(failed.value)


def test_the_step_check_passes_the_course_step_and_fails_computed_faces():
    """One launch each (the visible case): the course's step passes; a step that computes the
    grid's faces from ghost planes that do not exist fails."""
    ch20.stencil_step.check(references.reference_step)

    def faces_computed(comm, d_slab, d_out, c):
        planes = d_slab.shape[0] - 2
        d_slab[0].copy_to_device(np.zeros(d_slab.shape[1:], np.float32))
        d_slab[planes + 1].copy_to_device(np.zeros(d_slab.shape[1:], np.float32))
        ch20.stencil_planes(d_slab, d_out, c, 1, planes + 1)
    with pytest.raises(ag.CheckFailed, match="grid's first and last planes are copied"):
        ch20.stencil_step.check(faces_computed)


def test_the_overlap_check_requires_nonblocking_messages():
    with pytest.raises(ag.CheckFailed, match="rank 0 made no non-blocking call"):
        ch20.stencil_overlap.check(references.reference_step_blocking)


def test_stencil_planes_refuses_ghost_planes_and_mismatched_arrays():
    from numba import cuda
    d = cuda.to_device(np.zeros((4, 3, 3), np.float32))
    with pytest.raises(ValueError, match="not the slab's own"):
        ch20.stencil_planes(d, d, [0.1] * 7, 0, 2)
    with pytest.raises(ValueError, match="same|both must be"):
        ch20.stencil_planes(d, cuda.to_device(np.zeros((3, 3, 3), np.float32)), [0.1] * 7, 1, 2)


# ---- speed and measuring, without a GPU ------------------------------------------------------------

def _speed_outcome(yours, blocking, right=True):
    n = specs.SPEED_REPEATS
    return Outcome(outputs={"yours_ms": np.full(n, yours), "blocking_ms": np.full(n, blocking),
                            "overlap_ms": np.full(n, blocking * 0.9),
                            "right": np.full(n, float(right))})


class _Gpu:
    is_gpu = True
    name = "cuda"
    label = "an NVIDIA GPU"


def test_the_speed_verdict(monkeypatch):
    problem = ch20.stencil_overlap_speed
    case = Case(size=(4,) + specs.SPEED_GRID, inputs={})
    if CPU:
        for worth in ("zero", "defer"):
            monkeypatch.setenv("AAG_SPEED_WITHOUT_GPU", worth)
            verdict = problem.judge(case, _speed_outcome(1.0, 1.0))
            assert not verdict.passed and "only on a GPU" in verdict.message
        for worth in ("full", "not-applicable", ""):
            monkeypatch.setenv("AAG_SPEED_WITHOUT_GPU", worth)
            assert problem.judge(case, _speed_outcome(1.0, 1.0)).passed
            assert not problem.judge(case, _speed_outcome(1.0, 1.0, right=False)).passed
    monkeypatch.setattr(specs.device, "current", lambda: _Gpu())
    assert problem.judge(case, _speed_outcome(9.0, 10.0)).passed
    slow = problem.judge(case, _speed_outcome(9.6, 10.0))
    assert not slow.passed and "bar: 95% of the blocking step's time" in slow.message
    assert not problem.judge(case, _speed_outcome(1.0, 10.0, right=False)).passed


def test_the_timed_driver_checks_every_call_and_records_a_timeline():
    """What the speed test and the measuring cell run, on 2 simulated ranks: each step's time,
    every call checked (a wrong step is marked wrong), each rank's spans of MPI calls and
    kernels (CUDA events: the course's simulator gives them times)."""
    rng = np.random.default_rng(3)
    grid, c = rng.uniform(-1, 1, (7, 5, 6)).astype(np.float32), specs.coefficients(rng)

    def skips_the_interior(comm, d_slab, d_out, c):
        references.reference_step_overlap(comm, d_slab, d_out, c)
        d_out[2].copy_to_device(np.zeros(d_out.shape[1:], np.float32))

    fns = {"o": references.reference_step_overlap, "bad": skips_the_interior}
    got = ranks.launch(fns, drivers.TIMED, [{"slab": s, "c": c} for s in ch20.slabs_of(grid, 2, True)],
                       timeout=60, options={"warmup": 0, "repeats": 1})
    assert [bool(g["right_0"][0]) for g in got] == [True, True]
    assert not all(bool(g["right_1"][0]) for g in got)
    names = [str(n) for n in got[0]["span_names_0"]]
    assert names.count("kernel") == 3 and {"Irecv", "Isend"} <= set(names)
    assert np.all(got[0]["span_times_0"][:, 1] >= got[0]["span_times_0"][:, 0])
    _no_rank_left()


def test_the_measuring_cell_needs_a_gpu_and_says_so_plainly():
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch20.measure()
    rows = [{"label": "a", "ms": 2.0, "right": True, "timeline": [[("kernel", 0.0, 1.0)],
                                                                  [("Isend", 0.1, 0.2)]]},
            {"label": "b", "ms": 1.0, "right": True, "timeline": [[], []]}]
    chart = ch20.chart(rows)
    assert chart["name"] == ch20.CHART and [r["label"] for r in chart["rows"]] == ["a", "b"]
    assert ch20.chart() == {"name": ch20.CHART}
    import matplotlib
    matplotlib.use("Agg")
    ax = ch20.timeline(rows)
    assert len(ax.get_yticklabels()) == 4
    ch20.show_slabs(9, 4)


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_the_stencil_kernel_compiles_for_an_h200():
    assert_compiles_for_h200("ch20", (
        "import autograder.problems.ch20.drivers as dd\n"
        "dd.cuda, dd.float32 = cuda, numba.float32\n"
        "f3 = types.float32[:, :, ::1]; i = types.int64; s = types.float32\n"
        "sigs = [(dd.stencil_planes_kernel.__wrapped__(), (f3, f3, i, i, i, i) + (s,) * 7)]\n"), 1)
