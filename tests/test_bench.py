"""``aag bench``'s CUB column: the wrapper that builds a ``cuda.compute`` algorithm once (asked for
its temporary storage, given it on every call), the table that shows it, and, on a GPU with
``cuda-cccl`` installed, CUB's answers for the exercises it stands beside."""

from __future__ import annotations

import numpy as np
import pytest

import autograder as ag
from numba import cuda
from autograder.tools import bench


class FakeAlgorithm:
    """What a ``cuda.compute.make_*`` function returns: called once without storage for the bytes
    it needs, then with storage to run."""
    def __init__(self, **build):
        self.build, self.calls = build, []

    def __call__(self, *, temp_storage, **arrays):
        self.calls.append((temp_storage, arrays))
        return 1000 if temp_storage is None else None


def test_a_cub_call_sizes_its_storage_once_and_passes_the_new_arrays():
    first, second = cuda.to_device(np.zeros(4, np.float32)), cuda.to_device(np.ones(4, np.float32))
    call = bench.CubCall(FakeAlgorithm, {"d_in": first, "op": "plus"},
                         {"d_in": first, "num_items": 4})
    assert call.algorithm.build == {"d_in": first, "op": "plus"}
    call(d_in=second)
    call(d_in=first)
    (size_query, asked), (storage, run1), (storage2, run2) = call.algorithm.calls
    assert size_query is None and asked == {"d_in": first, "num_items": 4}
    assert storage is storage2 and storage.nbytes >= 1000     # one allocation, big enough
    assert run1 == {"d_in": second, "num_items": 4} and run2["d_in"] is first


def test_the_table_shows_cub_beside_the_course_kernel():
    row = {"problem": "scan_single_pass", "size": 1 << 20, "reference_ms": 0.5, "bytes": 8 << 20,
           "flops": 0, "copy_ms": 0.4, "cpu": {}, "cub_ms": 0.6, "cub_label": "CUB scan",
           "variants": {"other": 1.0}}
    reference, other = bench._problem_rows_table([row], 1e12).splitlines()[2:]
    assert "0.600 (CUB scan) | 120% |" in reference        # CUB's time / ours
    assert "| – | 60% |" in other                          # the ratio only, on the later rows


def _cuda_compute():
    try:
        import cuda.compute  # noqa: F401
    except Exception as why:
        pytest.skip(f"cuda.compute (the cuda-cccl package, a bench yardstick) is not here: {why}")


@pytest.mark.gpu
@pytest.mark.skipif(not ag.backend.is_gpu, reason="CUB runs on an NVIDIA GPU")
def test_cub_answers_match_numpy():
    _cuda_compute()
    rng = np.random.default_rng(5)
    n = 100_003
    x = rng.uniform(-1, 1, n).astype(np.float32)
    data = rng.integers(0, 256, n, dtype=np.uint8)
    A, B = np.sort(rng.integers(0, 1000, 777)).astype(np.float32), \
        np.sort(rng.integers(0, 1000, 555)).astype(np.float32)
    m = {"x": cuda.to_device(x), "data": cuda.to_device(data), "A": cuda.to_device(A),
         "B": cuda.to_device(B)}
    for name in ("reduce_sum", "scan_single_pass", "histogram_private", "merge_tiled"):
        label, make = bench._CUB_OPS[name]
        op = make(m)
        op(m)
        got = op.out.copy_to_host()
        if name == "reduce_sum":
            assert abs(got[0] - x.astype(np.float64).sum()) <= 1e-3 * np.abs(x).sum(), label
        elif name == "scan_single_pass":
            bound = 64 * np.finfo(np.float32).eps * np.cumsum(np.abs(x), dtype=np.float64)
            assert np.all(np.abs(got - np.cumsum(x, dtype=np.float64)) <= bound), label
        elif name == "histogram_private":
            assert np.array_equal(got, np.bincount(data, minlength=256)), label
        else:
            assert np.array_equal(got, np.sort(np.concatenate([A, B]))), label


def _ncu_recorder():
    import importlib.util
    import sys
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "scripts" / "gpu-ncu-record.py"
    spec = importlib.util.spec_from_file_location("gpu_ncu_record", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_ncu_record"] = module
    spec.loader.exec_module(module)
    return module


def test_every_ncu_target_names_a_kernel_that_exists():
    """What ``scripts/gpu-ncu-record.py`` profiles on the GPU machine: each target's exercise, and
    its bench row where it names one, exist under those names (a renamed row would cost a device
    run to find out)."""
    from autograder.problems import ALL, bench_variants, chapter_names
    recorder = _ncu_recorder()
    for chapter, exercise, variant, *_ in recorder.TARGETS + recorder.ISSUE23_TARGETS:
        # the chapter is the one whose recording shows the kernel (chapter 5 shows chapter 3's)
        assert chapter in chapter_names() and exercise in ALL, (chapter, exercise)
        if variant not in (None, recorder.CUB):
            assert variant in bench_variants(ALL[exercise]), (exercise, variant)


# ---- a bench row is a number only for a kernel that is right where it is timed ------------------

def _small_transpose_bench(monkeypatch, rows: dict):
    """``bench.bench_problem`` of the tiled transpose in CPU mode at a 40 × 70 "speed size" (the
    copy's time faked: it needs a GPU), with ``rows`` as its bench variants."""
    import copy
    import dataclasses
    from autograder.machine import timing
    from autograder.problems import ALL
    problem = copy.copy(ALL["transpose_tiled"])
    problem.gpu_sizes = dataclasses.replace(problem.gpu_sizes, speed=(40, 70))
    problem.vendor = None
    monkeypatch.setattr(timing, "copy_ceiling",
                        lambda nbytes: timing.Stats("copy", 1.0, 1, 1.0, 0.0, nbytes))
    monkeypatch.setattr("autograder.problems.bench_variants", lambda p: rows)
    return bench.bench_problem(problem, repeats=2, cpu=False)


@cuda.jit
def _transpose_but_a_big_ones_last_row(inp, out):
    """Right on every input of at most 37 rows (the visible cases'), wrong on taller ones."""
    c, r = cuda.grid(2)
    m, n = inp.shape
    if r < m and c < n and not (m > 37 and r == m - 1):
        out[c, r] = inp[r, c]


class _OwnGrid:
    """A launcher that gives the kernel above a grid over the whole input; with ``fail_above``,
    it raises on inputs taller than that instead."""
    def __init__(self, fail_above=None):
        self.fail_above = fail_above

    def __getitem__(self, config):
        def launch(inp, out):
            m, n = inp.shape
            if self.fail_above is not None and m > self.fail_above:
                raise MemoryError("out of shared memory at this size")
            _transpose_but_a_big_ones_last_row[((n + 31) // 32, (m + 7) // 8), (32, 8)](inp, out)
        return launch


@pytest.mark.skipif(ag.backend.is_gpu, reason="the small speed size is for CPU mode")
def test_a_bench_row_is_checked_at_the_speed_size_and_says_which_build_ran(monkeypatch):
    """A kernel right on the visible cases but not at the speed size, or one that fails there,
    gets no time, only its error; a launcher that picks its build says which one it ran (8-byte
    pairs at an even width)."""
    from autograder.problems.ch06 import references as ch06
    row = _small_transpose_bench(monkeypatch, {
        "pairs": ch06.pair_transpose, "wrong when tall": _OwnGrid,
        "fails when tall": lambda: _OwnGrid(fail_above=37)})
    assert set(row["variants"]) == {"pairs"} and row["reference_ms"] > 0
    assert row["builds"] == {"pairs": ["8-byte pairs"]}
    assert "wrong at the speed size" in row["variant_errors"]["wrong when tall"]
    assert "a timed call failed: MemoryError" in row["variant_errors"]["fails when tall"]


def test_a_launcher_that_picks_its_build_says_which(monkeypatch):
    """Chapter 6's pair transpose runs its pairs where the widths are even and says so, the
    reference where one is odd; outside ``choices`` nothing is kept."""
    from autograder.problems.ch06 import references as ch06
    from autograder.problems.kit import kernels
    pairs = ch06.pair_transpose()
    for shape, build in [((6, 10), "8-byte pairs"), ((6, 9), "the reference")]:
        inp = cuda.to_device(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
        out = cuda.device_array(shape[::-1], np.float32)
        with kernels.choices() as chosen:
            pairs[(1, 1), (32, 8)](inp, out)
        assert len(chosen) == 1 and chosen[0].startswith(build), chosen
        assert np.array_equal(out.copy_to_host(), inp.copy_to_host().T)
    pairs[(1, 1), (32, 8)](inp, out)
    assert kernels._chosen == []


# ---- the goals table ----------------------------------------------------------------------------

def _goal_row(problem, reference_ms, copy_ms=1.0, **more):
    return {"problem": problem, "reference_ms": reference_ms, "copy_ms": copy_ms, **more}


def test_the_goals_say_whether_the_reference_a_bench_row_or_nothing_meets_them():
    """Each goal's yardstick is the one it names (the copy; CUB, else PyTorch's CUB; cuBLAS through
    PyTorch, else CuPy), its kernel the fastest of the row, and "met by" tells the reference from
    a bench row from neither; a row missing from the run says so."""
    from autograder.tools import goals
    run = {"references": [
        _goal_row("vector_add_grid_stride", 1.05, variants={"wide": 1.10}),        # 95%: reference
        _goal_row("transpose_tiled", 1.25, variants={"pairs": 1.10},              # 80% / 91%
                  builds={"pairs": ["8-byte pairs"]}),
        _goal_row("conv2d_tiled", 2.0, variants={"other": 1.6}),                   # 50% / 62%
        _goal_row("scan_single_pass", 0.8, copy_ms=0.5, cub_ms=0.7, cub_label="CUB scan",
                  torch_ms=0.9, torch_label="torch.cumsum (CUB)"),
        _goal_row("matmul_register_tiled", 20.0, torch_ms=2.7, torch_label="torch.mm (cuBLAS)",
                  vendor_ms=2.6, vendor_label="cupy", variants={"big": 3.4}),
        _goal_row("reduce_sum", 0.25, torch_ms=0.248, torch_label="torch.sum (CUB)"),
        {"problem": "blur", "error": "RuntimeError: broken"}]}
    rows = {(r["goal"].exercise, r["goal"].against): r for r in goals.goal_rows(run)}
    assert rows["vector_add_grid_stride", "copy"]["met"] == "reference"
    transpose = rows["transpose_tiled", "copy"]
    assert transpose["met"] == "bench row" and transpose["best"] == "pairs"
    assert transpose["builds"] == ["8-byte pairs"]
    assert rows["conv2d_tiled", "copy"]["met"] == "no"
    scan = rows["scan_single_pass", "cub"]
    assert scan["yardstick"] == "CUB scan" and scan["best_share"] == pytest.approx(0.7 / 0.8)
    assert scan["met"] == "no" and rows["scan_single_pass", "copy"]["met"] == "no"
    sgemm = rows["matmul_register_tiled", "cublas"]
    assert sgemm["yardstick_ms"] == 2.7 and sgemm["met"] == "bench row"
    assert rows["reduce_sum", "cub"]["met"] == "reference"         # PyTorch's CUB, 0.992×
    assert rows["blur", "copy"]["met"] == "not in this run"
    assert rows["histogram_private", "cub"]["met"] == "not in this run"
    table = goals.goals_table(run)
    assert "| transpose, 8192 × 12288 | ≥ 85% of the copy | 1.250 ms, 80% of the copy | pairs: " \
           "1.100 ms, 91% of the copy (ran: 8-byte pairs) | copy 1.000 ms | bench row |" in table


def test_the_per_call_goal_reads_the_helpers_against_one_bound_launch_and_pytorch():
    """At 2^24 elements: a course helper's host time above the bound launch's, and its end-to-end
    time over PyTorch's; both limits must hold."""
    from autograder.problems.ch22 import BOUND_LAUNCH
    from autograder.tools import goals
    n = goals.CALL_SIZE

    def call(op, label, host, end):
        return {"op": op, "n": n, "label": label, "host_us": host, "end_to_end_us": end}
    rows = [{"op": "launch", "n": 0, "label": BOUND_LAUNCH, "host_us": 10.0, "end_to_end_us": 13},
            call("sum", "course helper sum_on_device", 35.0, 40.0),       # 25 above, 1.14×
            call("sum", "torch.sum (CUB)", 20.0, 35.0),
            call("scan", "course helper scan_on_device", 45.0, 90.0),     # 35 above: no
            call("scan", "torch.cumsum (CUB)", 20.0, 80.0),
            call("histogram", "course helper histogram_on_device", 30.0, 140.0),   # 1.4×: no
            call("histogram", "torch.bincount", 20.0, 100.0),
            call("sum", "course helper sum_on_device", 99.0, 99.0) | {"n": 1 << 18}]
    met = {c["op"]: c["met"] for c in goals.call_rows({"rows": rows})}
    assert met == {"sum": "yes", "scan": "no", "histogram": "no"}
    assert goals.call_rows({"rows": rows[1:]})[0]["met"] == "not in this run"


def test_bench_goals_reads_a_recorded_run_without_a_gpu(capsys):
    """``aag bench --goals`` on a raw file of ``docs/``: a table per run in it, from the recorded
    numbers (the scan's reference 1.05× CUB's speed in the second run of 2026-12-04)."""
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "docs/h200-2026-12-04-issue23b.json"
    assert bench.main(["--goals", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("bench:")
    assert ("| scan 2^28 fp32, against CUB | ≥ 1.00× CUB's speed | 0.786 ms, 1.05× CUB's speed "
            "| the reference |") in out
    assert "| sum | course helper sum_on_device (memset + bound launch) | 21.7 µs |" in out


def test_a_bench_run_cut_short_keeps_the_rows_it_timed(monkeypatch, tmp_path):
    """``bench.json`` is written after every exercise (the GPU machine's calls are cut at ten
    minutes, and what is in the output folder then still comes back), marked incomplete until
    the run ends; a finished run is marked complete and ends with the goals table."""
    from autograder.machine import timing
    monkeypatch.setattr(timing, "require_gpu", lambda what: None)
    monkeypatch.setattr(bench, "_device_facts", lambda: {"name": "a GPU"})
    monkeypatch.setattr(bench, "peak_fp32_flops", lambda: 1e12)

    def timed(problem, **kwargs):
        if problem.name == "reduce_sum":
            raise KeyboardInterrupt                   # the call's time limit, as it were
        return {"problem": problem.name, "size": 10, "reference_ms": 1.0, "bytes": 8,
                "flops": 0, "copy_ms": 0.5, "cpu": {}}
    monkeypatch.setattr(bench, "bench_problem", timed)
    with pytest.raises(KeyboardInterrupt):
        bench.main(["--out", str(tmp_path), "--only", "transpose_tiled", "reduce_sum"])
    import json
    kept = json.loads((tmp_path / "bench.json").read_text())
    assert kept["complete"] is False and [r["problem"] for r in kept["references"]] == \
        ["transpose_tiled"]
    assert bench.main(["--out", str(tmp_path), "--only", "transpose_tiled"]) == 0
    done = json.loads((tmp_path / "bench.json").read_text())
    assert done["complete"] is True and done["references"][0]["reference_ms"] == 1.0
    assert "What the reference kernels are held to" in (tmp_path / "bench.md").read_text()
    assert not list(tmp_path.glob("*.part"))
