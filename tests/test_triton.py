"""Triton beside Numba (autograder.machine.triton_bridge): in CPU mode a ``@triton.jit`` kernel
runs in Triton's interpreter on the course's arrays, without PyTorch; a load past the end of an
array without a mask stops the process, as it faults on a GPU.

Triton installs on Linux only: elsewhere these tests skip with the reason, except under CI
(``AAG_TRITON_TEST=require``), which installs it and must run them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autograder as ag
from autograder.machine import triton_bridge

REASON = triton_bridge.unavailable_reason()
if REASON and os.environ.get("AAG_TRITON_TEST") == "require":
    raise RuntimeError(f"AAG_TRITON_TEST=require, but {REASON}")
needs_triton = pytest.mark.skipif(REASON is not None, reason=REASON or "")
if REASON is None:
    import triton



def _kernels() -> dict:
    """The kernels of tests/triton_kernels.py, made after CPU mode set TRITON_INTERPRET."""
    assert not ag.backend.is_gpu and os.environ.get("TRITON_INTERPRET") == "1"
    import triton_kernels
    return vars(triton_kernels)


@pytest.fixture(scope="module")
def kernels():
    if REASON is not None:
        pytest.skip(REASON)
    if ag.backend.is_gpu:
        pytest.skip("the interpreter is CPU mode's; tests/test_gpu.py runs Triton on the GPU")
    return _kernels()


@needs_triton
def test_cpu_mode_runs_triton_in_its_interpreter_without_pytorch(kernels):
    """Does CPU mode set TRITON_INTERPRET before any kernel is made, and run one on the course's
    arrays (a simulator device array and a NumPy array) with no PyTorch loaded?"""
    from numba import cuda
    rng = np.random.default_rng(0)
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    d_x = cuda.to_device(x)
    v = triton_bridge.view
    kernels["add"][(triton.cdiv(n, 128),)](v(d_x), v(y), v(out), n, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    assert "torch" not in sys.modules


@needs_triton
def test_a_masked_row_softmax_with_minus_infinity_padding(kernels):
    """A row softmax whose padding lanes load -inf: right within float32 rounding, rows shorter
    than the block included."""
    rng = np.random.default_rng(1)
    rows, cols, stride = 5, 37, 40
    x = (rng.standard_normal((rows, stride)) * 30).astype(np.float32)
    y = np.full_like(x, np.nan)
    kernels["row_softmax"][(rows,)](triton_bridge.view(x), triton_bridge.view(y), cols, stride,
                                    BLOCK=64)
    x64 = x[:, :cols].astype(np.float64)
    want = np.exp(x64 - x64.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(y[:, :cols], want, rtol=1e-5, atol=1e-7)
    assert np.isnan(y[:, cols:]).all()        # never written: the mask held


@needs_triton
def test_fp16_tiles_and_dot_with_a_float32_result(kernels):
    """fp16 loads and tl.dot with an fp32 result, as the attention chapter uses them."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    c = np.full((16, 16), np.nan, np.float32)
    v = triton_bridge.view
    kernels["fp16_dot"][(1,)](v(a), v(b), v(c), N=16)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


@needs_triton
def test_the_tensor_interface_writes_through_to_the_array():
    """The interpreter's round trip (storage to a host copy, set_, copy_ back) reaches the
    original array, and its host copy is the array's bytes."""
    a = np.arange(10, dtype=np.float32)
    t = triton_bridge.view(a)
    copy = t.untyped_storage().cpu()
    assert copy.data_ptr() != t.data_ptr() and bytes(copy.data) == a.tobytes()
    hst = t.new_empty(0, device="cpu").set_(copy, t.storage_offset(), t.size(), t.stride())
    np.frombuffer(copy.data, np.float32)[3] = 99          # as a kernel's store would
    t.untyped_storage().copy_(hst.untyped_storage())
    assert a[3] == 99 and t.size() == (10,) and t.stride() == (1,) and str(t.dtype) == "float32"


@needs_triton
def test_a_load_past_the_end_without_a_mask_stops_the_process():
    """An unmasked load that runs past the end of an array faults (the host copy ends before a
    page the process may not read); the same kernel with its mask runs."""
    code = textwrap.dedent("""
        import numpy as np, autograder as ag, sys
        sys.path.insert(0, %r)
        import test_triton as t
        k = t._kernels()
        n = 1000
        x = np.ones(n, np.float32); y = np.ones(n, np.float32); out = np.zeros(n, np.float32)
        from autograder.machine.triton_bridge import view
        k[sys.argv[1]][(8,)](view(x), view(y), view(out), n, BLOCK=128)
        print("RAN", float(out.sum()))
    """) % os.path.dirname(__file__)
    env = dict(os.environ, AAG_BACKEND="cpu")
    ok = subprocess.run([sys.executable, "-c", code, "add"], capture_output=True, text=True,
                        timeout=300, env=env)
    assert "RAN 2000.0" in ok.stdout, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-c", code, "add_unmasked_load"], capture_output=True,
                         text=True, timeout=300, env=env)
    assert bad.returncode == -11 and "RAN" not in bad.stdout, (bad.returncode, bad.stdout, bad.stderr[-2000:])


def test_where_triton_is_missing_the_reason_says_what_to_do(monkeypatch):
    """Off Linux, the reason names the platforms Triton installs on; on Linux, how to install."""
    import importlib.util
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(triton_bridge.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(triton_bridge.platform, "machine", lambda: "arm64")
    assert "Linux" in triton_bridge.unavailable_reason() and "Numba" in triton_bridge.unavailable_reason()
    monkeypatch.setattr(triton_bridge.platform, "system", lambda: "Linux")
    monkeypatch.setattr(triton_bridge.platform, "machine", lambda: "x86_64")
    assert "pip install" in triton_bridge.unavailable_reason()



# -- grading a Triton kernel: the checks and the judge see its launches and its data flow --------
TRITON_ADD = '''
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def vector_add(x, y, out):
'''
LAUNCH = "    add_kernel[(triton.cdiv(out.size, 256),)](view(x), view(y), view(out), out.size, BLOCK=256)\n"
HOST = ("    answer = x.copy_to_host() + y.copy_to_host()\n"
        "    tmp = cuda.to_device(answer)\n"
        "    add_kernel[(triton.cdiv(out.size, 256),)](view(tmp), view(cuda.device_array_like(tmp)),"
        " view(out), out.size, BLOCK=256)\n")
HALF = ("    half = out.size // 2\n"
        "    add_kernel[(triton.cdiv(half, 256),)](view(x), view(y), view(out), half, BLOCK=256)\n")


def _launcher(body: str):
    """The learner's launcher ``vector_add`` from ``TRITON_ADD + body``, made as a notebook cell
    makes it (Triton reads the kernel's source, so the code goes through a file)."""
    import importlib.util
    import tempfile
    path = tempfile.NamedTemporaryFile("w", suffix="_triton_cell.py", delete=False)
    path.write("import numpy as np\nfrom numba import cuda\n" + TRITON_ADD + body)
    path.close()
    spec = importlib.util.spec_from_file_location(os.path.basename(path.name)[:-3], path.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.vector_add


def _triton_vector_add():
    """Chapter 2's vector add, asked for as a Triton kernel."""
    import copy
    problem = copy.copy(ag.problems.ch02.vector_add)
    problem.kernel_language = "triton"
    return problem


@needs_triton
def test_a_triton_launcher_passes_a_triton_exercise_its_loads_and_stores_seen():
    """A right Triton kernel passes the visible and hidden checks in CPU mode: the data-flow
    recorder sees its launch as the learner's, its loads of x and y and its stores to out."""
    problem = _triton_vector_add()
    problem.check(_launcher(LAUNCH))
    problem.check_hidden(_launcher(LAUNCH))


@needs_triton
@pytest.mark.parametrize("body,why", [
    (HOST, "copied to the host"),
    (HALF, "never written"),
], ids=["host_answer_stored_by_triton", "half_the_elements"])
def test_a_triton_launcher_that_cheats_or_stops_short_fails(body, why):
    """A host-computed answer copied out by a Triton kernel, and a kernel over half the
    elements, both fail, each for its reason."""
    with pytest.raises(ag.CheckFailed, match=why):
        _triton_vector_add().check(_launcher(body))


@needs_triton
def test_a_triton_kernel_is_not_the_answer_to_a_numba_exercise():
    """The judge lets a notebook import Triton only where it has a Triton exercise: in chapter
    2's vector add (a Numba exercise) the import fails while it is graded."""
    import bank
    from autograder.grading import judge
    settings = judge.Settings(secret="triton-test", sandbox="off", exec_timeout=300)
    results = judge.judge_notebook(bank.notebook("vector_add", bank.SETUP + TRITON_ADD + LAUNCH),
                                   settings)
    error = " ".join(r.error for r in results.values())
    assert not any(r.passed for r in results.values()) and "`triton` cannot be imported" in error


def test_the_judge_allows_triton_only_when_told(monkeypatch):
    """block_gpu_libraries blocks Triton unless AAG_ALLOW_TRITON=1 (the judge's setting for a
    notebook with a Triton exercise); CuPy and PyTorch stay blocked either way."""
    from autograder.grading import runner
    finder = runner._NoGpuLibraries()
    for allowed in ("0", "1"):
        monkeypatch.setenv(runner.ALLOW_TRITON_ENV, allowed)
        monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
        monkeypatch.setattr(sys, "modules", dict(sys.modules))
        runner.block_gpu_libraries()
        with pytest.raises(ModuleNotFoundError):
            finder.find_spec("cupy")
        if allowed == "1":
            assert finder.find_spec("triton.language") is None
        else:
            with pytest.raises(ModuleNotFoundError):
                finder.find_spec("triton.language")
