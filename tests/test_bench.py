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
