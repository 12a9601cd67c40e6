"""GPU-only tests: timing, speed bars, hangs. Skipped with a reason where there is no NVIDIA GPU.

Run on a GPU machine with `python -m pytest -m gpu tests` (scripts/gpu-check does it on the
course's lent H200). The correctness catalogue in test_problems.py runs on the GPU as well.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autograder as ag
from autograder import timing
from autograder.checks import CheckFailed

from submissions import grid_stride_chunked, grid_stride_ok

pytestmark = pytest.mark.gpu


def test_copy_ceiling_is_plausible():
    """Is the copy ceiling a real bandwidth (above PCIe, below 10 TB/s)?"""
    s = timing.copy_ceiling(1 << 30)
    assert 100 < s.gbps < 10_000, s


def test_event_timing_tracks_work():
    """Does the harness time 4x the work as clearly more than 1x the work?"""
    from numba import cuda
    ref = ag.problems.ch02.reference_grid_stride()
    small = [cuda.device_array(1 << 24, np.float32) for _ in range(3)]
    big = [cuda.device_array(1 << 26, np.float32) for _ in range(3)]
    t_small = timing.time_gpu("small", lambda i: ref[264, 256](*small), repeats=20)
    t_big = timing.time_gpu("big", lambda i: ref[264, 256](*big), repeats=20)
    assert t_big.median_ms > 2.5 * t_small.median_ms


def test_reference_speed_passes():
    """Does the reference grid-stride kernel pass its own speed test?"""
    ag.problems.ch02.vector_add_grid_stride.check_speed(grid_stride_ok)


def test_uncoalesced_kernel_fails_speed():
    """Does a correct but uncoalesced kernel (a contiguous chunk per thread) fail the speed bar?"""
    with pytest.raises(CheckFailed):
        ag.problems.ch02.vector_add_grid_stride.check_speed(grid_stride_chunked)


def test_hang_costs_one_timeout():
    """Does a kernel that never ends fail its check after the time limit, and the next check at once?"""
    code = textwrap.dedent("""
        import time, os
        os.environ["AAG_CHECK_TIMEOUT"] = "5"
        import autograder as ag
        from numba import cuda
        @cuda.jit
        def forever(x, y, out):
            i = cuda.grid(1)
            while i < out.size:
                out[i] = x[i] + y[i]
        p = ag.problems.ch02.vector_add_grid_stride
        for attempt in (1, 2):
            t = time.time()
            try:
                p.check(forever)
                print("PASSED")
            except ag.CheckFailed as e:
                print("FAILED", attempt, round(time.time() - t, 1), str(e).splitlines()[1])
        os._exit(0)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    lines = [l for l in proc.stdout.splitlines() if l.startswith(("FAILED", "PASSED"))]
    assert len(lines) == 2 and all(l.startswith("FAILED") for l in lines), proc.stdout + proc.stderr
    assert float(lines[0].split()[2]) >= 4.5 and float(lines[1].split()[2]) < 1.0, lines


def test_timing_holds_the_gpu_so_python_launch_overhead_is_not_timed():
    """A one-block kernel takes microseconds on the GPU; Python needs 20-100 µs to launch it.
    The timed region starts when the GPU reaches the launch, so the median stays far below that."""
    from numba import cuda

    @cuda.jit
    def tiny(out):
        out[cuda.threadIdx.x] = 1.0

    out = cuda.device_array(32, np.float32)
    assert timing.time_gpu("tiny", lambda i: tiny[1, 32](out), repeats=30).median_ms < 0.02


def _gray_kernels():
    from numba import cuda

    @cuda.jit
    def gray_rows_on_y(image, gray):
        col, row = cuda.grid(2)
        if row < gray.shape[0] and col < gray.shape[1]:
            gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                              + 0.114 * image[row, col, 2])

    @cuda.jit
    def gray_rows_on_x(image, gray):
        # Correct, but a warp walks down a column: every pixel of a warp in another row.
        row, col = cuda.grid(2)
        h, w = gray.shape
        # the grid covers (cols, rows); map it onto the image transposed, covering it fully
        for r in range(row, h, cuda.gridsize(2)[0]):
            for c in range(col, w, cuda.gridsize(2)[1]):
                gray[r, c] = (0.299 * image[r, c, 0] + 0.587 * image[r, c, 1]
                              + 0.114 * image[r, c, 2])
    return gray_rows_on_y, gray_rows_on_x


def test_a_2d_speed_test_passes_a_coalesced_kernel_and_fails_a_column_walking_one():
    """The speed test on a shape (a 4097 × 8191 image): a kernel with x along the rows keeps up
    with the reference; one whose warps walk down columns is correct and far slower."""
    good, column_walker = _gray_kernels()
    problem = ag.problems.ch03.rgb_to_gray
    problem.check(column_walker)            # correct...
    problem.check_speed(good)
    with pytest.raises(CheckFailed, match="of the course reference"):
        problem.check_speed(column_walker)  # ...but slow


def test_the_speed_test_refuses_the_course_reference_as_a_submission():
    with pytest.raises(CheckFailed, match="not yours"):
        ag.problems.ch03.rgb_to_gray.check_speed(ag.problems.ch03.rgb_to_gray.reference_kernel())


def _run_fenced(body: str) -> str:
    """``body`` in a fresh process (a fault breaks its CUDA context), its stdout and stderr."""
    code = "import numpy as np\nfrom numba import cuda\nfrom autograder.machine import fenced\n" \
        + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return proc.stdout + proc.stderr


def test_a_fenced_input_holds_its_values_and_a_kernel_inside_it_runs():
    """Does a fenced copy keep the host's values and a 16-byte aligned start (an odd size too),
    and does a guarded kernel over it run clean?"""
    out = _run_fenced("""
        host = np.random.default_rng(1).standard_normal((20001, 3)).astype(np.float32)
        d = fenced.to_device(host)
        print("ALIGNED", d.__cuda_array_interface__["data"][0] % 16 == 0)
        @cuda.jit
        def copy(a, b):
            i = cuda.grid(1)
            if i < a.shape[0]:
                for c in range(3):
                    b[i, c] = a[i, c]
        b = cuda.device_array_like(host)
        copy[(20001 + 127) // 128, 128](d, b)
        cuda.synchronize()
        print("SAME", np.array_equal(d.copy_to_host(), host), np.array_equal(b.copy_to_host(), host),
              fenced.unavailable_reason())
    """)
    assert "SAME True True None" in out and "ALIGNED True" in out, out


def test_the_course_sum_loading_pairs_passes_on_fenced_odd_sized_inputs():
    """Chapter 10's reference sum loads 8-byte pairs: an input that is not 8-byte aligned faults
    (CUDA_ERROR_MISALIGNED_ADDRESS), so the fence must keep the start aligned for odd sizes."""
    out = _run_fenced("""
        import autograder as ag
        p = ag.problems.ch10.reduce_sum
        print("VERDICT", p.verdict(p.reference(), p.cases()).passed)
    """)
    assert "VERDICT True" in out, out


def test_a_read_one_element_past_a_fenced_input_faults():
    """Does reading the first element after a fenced input stop the kernel (as CPU mode's index
    check does), where the same read of an ordinary copy passes unnoticed?"""
    code = """
        host = np.arange(20000 * 3, dtype=np.float32).reshape(20000, 3)   # 240,000 bytes: no slack
        @cuda.jit
        def past(a, out):
            out[0] = a[a.shape[0], 0]        # one row past the end
        out = cuda.device_array(1, np.float32)
        d = {how}(host)
        try:
            past[1, 1](d, out)
            cuda.synchronize()
            print("NO FAULT")
        except Exception as exc:
            print("FAULT", type(exc).__name__, "ILLEGAL_ADDRESS" in str(exc).upper())
    """
    assert "FAULT CudaAPIError True" in _run_fenced(code.format(how="fenced.to_device"))
    assert "NO FAULT" in _run_fenced(code.format(how="cuda.to_device"))


def test_a_tail_tile_read_past_the_inputs_fails_its_check_on_the_gpu():
    """A tiled n-body kernel that loads its last tile in full (reading past pos and mass) but sums
    only the bodies that exist gives right values; its check must fail all the same."""
    from bank import entries
    entry = next(e for e in entries() if e.id == "nbody_tiled/wrong_tail_not_guarded")
    out = _run_fenced(
        "import autograder as ag\n" + entry.code + textwrap.dedent("""
        try:
            ag.problems.ch19.nbody_tiled.check(nbody_tiled_kernel)
            print("PASSED")
        except ag.CheckFailed as e:
            print("FAILED", str(e).replace(chr(10), " ")[:400])
    """))
    assert "FAILED" in out and "PASSED" not in out, out


def test_a_triton_kernel_runs_on_numba_arrays_timed_by_the_course_events():
    """Does a Triton kernel take Numba's device arrays (through triton_bridge.view), launch on the
    stream Numba's events record on (a plausible bandwidth), and fault past a fenced input?"""
    out = _run_fenced("""
        import sys, time
        try:
            import triton
        except ImportError:
            print("NO TRITON"); raise SystemExit
        sys.path.insert(0, "tests")
        from autograder import timing
        import triton_kernels as k
        from autograder.machine.triton_bridge import view
        n = (1 << 26) + 3
        x = cuda.to_device(np.ones(n, np.float32)); y = cuda.to_device(np.full(n, 2, np.float32))
        out = cuda.device_array(n, np.float32)
        grid = (triton.cdiv(n, 1024),)
        k.add[grid](view(x), view(y), view(out), n, BLOCK=1024)
        cuda.synchronize()
        ok = bool((out.copy_to_host() == 3).all())
        t = timing.time_gpu("triton add", lambda i: k.add[grid](view(x), view(y), view(out), n,
                                                                   BLOCK=1024), repeats=20)
        gbps = 3 * 4 * n / t.median_ms / 1e6
        print("TRITON", triton.__version__, ok, "torch" in sys.modules, round(t.median_ms, 3), round(gbps))
        f = fenced.to_device(np.ones(1000, np.float32)); o = cuda.device_array(1000, np.float32)
        # 1000 floats end on a 16-byte boundary: the unmasked load's next element faults
        try:
            k.add_unmasked_load[(8,)](view(f), view(f), view(o), 1000, BLOCK=128)
            cuda.synchronize()
            print("NO FAULT")
        except Exception as exc:
            print("FAULT", "ILLEGAL_ADDRESS" in str(exc).upper() or "illegal" in str(exc).lower())
    """)
    if "NO TRITON" in out:
        pytest.skip("Triton is not installed on this GPU machine")
    line = next((l for l in out.splitlines() if l.startswith("TRITON")), None)
    assert line is not None, out
    _, version, ok, torch_loaded, ms, gbps = line.split()
    # (Triton before 3.9 imports PyTorch itself where it is installed, and launches on PyTorch's
    # current stream, the legacy default stream here; 3.9 launches without it, and so does an
    # older Triton where PyTorch is blocked: test_triton_launches_where_the_judge_blocks_pytorch.)
    assert ok == "True", out
    if tuple(int(v) for v in version.split(".")[:2]) >= (3, 9):
        assert torch_loaded == "False", out
    assert 500 < float(gbps) < 10_000, out          # a real bandwidth: the events saw the kernel
    assert "FAULT True" in out, out


def test_triton_launches_where_the_judge_blocks_pytorch():
    """The judge's student process blocks PyTorch (runner.block_gpu_libraries) and allows Triton
    for a Triton exercise: a Triton kernel given Numba arrays through view() must still compile,
    launch and compute there, whatever Triton's version (before 3.9 it asks PyTorch for the
    device and the stream unless triton_bridge answers for it)."""
    out = _run_fenced("""
        import os, sys
        os.environ["AAG_ALLOW_TRITON"] = "1"
        from autograder.grading import runner
        runner.block_gpu_libraries()
        try:
            import triton
        except ImportError:
            print("NO TRITON"); raise SystemExit
        try:
            import torch
            print("TORCH IMPORTED")
        except ImportError:
            pass
        sys.path.insert(0, "tests")
        import triton_kernels as k
        from autograder.machine.triton_bridge import view
        n = 100003
        x = fenced.to_device(np.arange(n, dtype=np.float32)); y = fenced.to_device(np.ones(n, np.float32))
        out = cuda.device_array(n, np.float32)
        k.add[(triton.cdiv(n, 512),)](view(x), view(y), view(out), n, BLOCK=512)
        cuda.synchronize()
        print("RIGHT", bool((out.copy_to_host() == np.arange(n) + 1).all()), "torch" in sys.modules)
    """)
    if "NO TRITON" in out:
        pytest.skip("Triton is not installed on this GPU machine")
    assert "TORCH IMPORTED" not in out and "RIGHT True False" in out, out

