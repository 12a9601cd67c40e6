"""Provenance: a right answer counts only if the learner's own kernel computed it.

CPU mode records the data flow of every check call (autograder/provenance.py): inputs read and
outputs stored by threads of the learner's kernel, host copies of the exercise's arrays; the
judge cross-checks the harness's launch count with the recorder's; the static pass flags the
tools of tampering. GPU tests (host copies seen at the driver) are marked ``gpu``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import autograder as ag
from autograder import judge, provenance
from autograder.checks import CheckFailed
from autograder.judge import CheckCall
from autograder.problem import Case

vector_add = ag.problems.ch02.vector_add
grid_stride = ag.problems.ch02.vector_add_grid_stride
cpu_only = pytest.mark.skipif(ag.backend.is_gpu, reason="CPU mode (the simulator) only")


@cuda.jit
def add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@cuda.jit
def nothing(x):
    pass


def failure(problem, submission) -> str:
    with pytest.raises(CheckFailed) as info:
        problem.check(submission)
    return str(info.value)


# ---- what passes -----------------------------------------------------------------------------------

def test_a_correct_launcher_passes():
    def add_vectors(x, y, out):
        add_kernel[(out.size + 127) // 128, 128](x, y, out)
    vector_add.check(add_vectors)


def test_host_made_views_sizes_and_scratch_arrays_are_fine():
    @cuda.jit
    def into(x, y, tmp):
        i = cuda.grid(1)
        if i < tmp.size:
            tmp[i] = x[i] + y[i]

    @cuda.jit
    def copy(tmp, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = tmp[i]

    def add_vectors(x, y, out):
        n = len(x)
        assert x.size == n and x.shape == (n,)
        tmp = cuda.device_array(n, dtype=x.dtype)
        into[(n + 63) // 64, 64](x[:n], y[0:], tmp)      # slices made on the host: views
        copy[(n + 63) // 64, 64](tmp, out[:n])
    vector_add.check(add_vectors)


def test_a_histogram_whose_empty_bins_were_zeroed_by_the_course_passes():
    @cuda.jit
    def histogram(data, hist):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.add(hist, data[i], 1)
    ag.problems.ch09.histogram_global.check(histogram)


# ---- what fails, and says why --------------------------------------------------------------------

@cpu_only
def test_a_do_nothing_kernel_and_numpy_fails_as_a_host_copy():
    def add_vectors(x, y, out):
        nothing[1, 1](x)
        out.copy_to_device(x.copy_to_host() + y.copy_to_host())
    assert "`x` was copied to the host (copy_to_host)" in failure(vector_add, add_vectors)


@cpu_only
def test_numpy_views_of_device_arrays_count_as_host_copies():
    def add_vectors(x, y, out):
        add_kernel[(out.size + 127) // 128, 128](x, y, out)
        np.asarray(out)      # looking at the values on the host
    assert "turned into a NumPy array on the host" in failure(vector_add, add_vectors)


@cpu_only
def test_an_output_written_by_the_host_fails_whoever_computed_it():
    @cuda.jit
    def into(x, y, tmp):
        i = cuda.grid(1)
        if i < tmp.size:
            tmp[i] = x[i] + y[i]

    def add_vectors(x, y, out):
        # right values, computed by the learner's kernel into a scratch array, then put into
        # `out` by the host through the simulator's internals (no hooked method)
        tmp = cuda.device_array(out.size, out.dtype)
        into[(out.size + 127) // 128, 128](x, y, tmp)
        out._ary[:] = tmp._ary
    assert "`out[0]` was written by the host, not by your kernel" in failure(vector_add, add_vectors)


@cpu_only
def test_the_host_sees_a_decoy_of_the_inputs_the_kernel_the_real_values():
    seen = {}

    @cuda.jit
    def store(x, res, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = res[i] + 0.0 * x[i]

    def add_vectors(x, y, out):
        seen["host"] = np.array(x._ary)                  # what host code can reach
        store[(out.size + 127) // 128, 128](x, cuda.to_device(x._ary + y._ary), out)
    case = vector_add.cases()[0]
    outcome = vector_add.run_here(add_vectors, case)
    assert not np.array_equal(seen["host"], case.inputs["x"])
    verdict = vector_add.judge(case, outcome)
    assert not verdict.passed and "elements are wrong" in verdict.message


@cpu_only
def test_a_kernel_that_does_not_read_every_input_fails_after_the_values():
    rec = provenance.Recorder()
    x = cuda.to_device(np.arange(20, dtype=np.float32))
    out = cuda.to_device(np.full(20, np.nan, np.float32))
    rec.add_input("x", x, decoy=True)
    rec.add_output("out", out, (20,))

    @cuda.jit
    def first_half(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] if i < 10 else 1.0

    with provenance.recording(rec):
        first_half[1, 32](x, out)
    rec.restore()
    assert rec.verdict().startswith("`x[10]` was never read by a thread of your kernel")
    assert not rec.judged()["before_values"]
    assert np.array_equal(x.copy_to_host(), np.arange(20, dtype=np.float32))   # restored


@cpu_only
def test_reads_through_a_host_made_view_count_for_the_buffer():
    rec = provenance.Recorder()
    x = cuda.to_device(np.arange(8, dtype=np.float32))
    out = cuda.to_device(np.full(7, np.nan, np.float32))
    rec.add_input("x", x, decoy=True)
    rec.add_output("out", out, (7,))

    @cuda.jit
    def shifted(a, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i]

    with provenance.recording(rec):
        shifted[1, 8](x[1:], out)
    rec.restore()
    assert np.array_equal(out.copy_to_host(), np.arange(1, 8, dtype=np.float32))   # real data
    assert rec.verdict().startswith("`x[0]` was never read by a thread of your kernel")


@cpu_only
def test_grid_stride_by_block_dim_writes_elements_twice():
    @cuda.jit
    def by_block(x, y, out):
        for i in range(cuda.grid(1), out.size, cuda.blockDim.x):
            out[i] = x[i] + y[i]
    text = failure(grid_stride, by_block)
    assert "was written by two threads, 0 and 32" in text


def test_a_wrong_kernel_hears_about_its_values_first():
    @cuda.jit
    def short(x, y, out):
        i = cuda.grid(1)
        if i < out.size - 1:
            out[i] = x[i] + y[i]

    def add_vectors(x, y, out):
        short[(out.size + 127) // 128, 128](x, y, out)
    assert "never written" in failure(vector_add, add_vectors)


# ---- the judge ----------------------------------------------------------------------------------------

def _judge(code: str, checks=None):
    setup = "import numpy as np\nfrom numba import cuda\nimport autograder as ag\n"
    checks = checks or [CheckCall("ch02.vector_add", "check", "add_vectors")]
    return judge.judge_exercise([{"id": "s", "source": setup + textwrap.dedent(code)}], checks,
                                judge.Settings(secret="provenance-test", exec_timeout=120), "g")


@cpu_only
def test_a_fake_launch_record_through_the_hooks_closure_fails_and_is_flagged():
    result = _judge('''
        def add_vectors(x, y, out):
            from numba.cuda.simulator import kernel as k
            todo = [k.FakeCUDAKernel.__call__]
            while todo:
                for cell in todo.pop().__closure__ or ():
                    obj = cell.cell_contents
                    if isinstance(getattr(obj, "launches", None), list):
                        obj.launches.append(("add_vectors", True))
                    elif callable(obj):
                        todo.append(obj)
            out._ary[:] = x._ary + y._ary
    ''')
    assert not result.passed
    assert "written by the host" in result.error or "elements are wrong" in result.error
    assert any("closure" in f for f in result.flags)
    assert any(line.startswith(judge.FLAG_LINE) for line in result.lines)


def test_the_launch_count_is_cross_checked_with_the_recorder():
    case = Case(size=4, inputs={})
    fake = {"student_launches": 1, "outputs": "o.npz",
            "provenance": {"learner_launches": 0, "learner_stores": 0}}
    verdict = judge._launch_verdict(vector_add, case, fake)
    assert verdict is not None and "no thread of your kernel stored it" in verdict.message
    missing = judge._launch_verdict(vector_add, case, {"student_launches": 1, "outputs": "o.npz"})
    assert missing is not None and "record of this call is missing" in missing.message
    fine = {"student_launches": 1, "outputs": "o.npz",
            "provenance": {"learner_launches": 1, "learner_stores": 4}}
    assert judge._launch_verdict(vector_add, case, fine) is None


def test_the_inputs_file_is_gone_before_learner_code_runs():
    result = _judge('''
        import glob
        @cuda.jit
        def add_kernel(x, y, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = x[i] + y[i]

        def add_vectors(x, y, out):
            assert not glob.glob("inputs-*"), glob.glob("inputs-*")
            add_kernel[(out.size + 127) // 128, 128](x, y, out)
    ''')
    assert result.passed, result.error


def test_gpu_libraries_cannot_be_imported_in_the_student_process():
    code = ("from autograder import runner\nrunner.block_gpu_libraries()\n"
            "for name in ('cupy', 'torch', 'cuda.compute', 'triton'):\n"
            "    try:\n        __import__(name)\n    except ImportError as e:\n"
            "        assert 'cannot be imported while your code is graded' in str(e), e\n"
            "    else:\n        raise SystemExit(name + ' imported')\n"
            "import numpy, numba.cuda\nprint('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


# ---- the static pass ---------------------------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("import gc\ngc.get_objects()", "gc"),
    ("import inspect\ninspect.currentframe().f_back.f_locals", "frame inspection"),
    ("f = lambda: 0\nf.__closure__", "closure access"),
    ("import ctypes", "ctypes"),
    ("import sys\nsys.modules['numpy'] = None", "sys.modules"),
    ("import sys\nsys.meta_path.clear()", "sys.meta_path"),
    ("import numpy as np\nnp.allclose = lambda *a, **k: True", "patching numpy"),
    ("from numba import cuda\ncuda.synchronize = print", "patching numba"),
    ("import autograder as ag\nsetattr(ag, 'x', 1)", "setattr"),
    ("x = None\nprint(x._ary)", "_ary"),
    ("import numpy as np\nnp.load('inputs-check-0.npz')", "grader's files"),
    ("class A: pass\nA().__class__ = int", "__class__"),
    ("%time x = 1\nimport gc", "gc"),                  # a magic does not hide the rest
    ("%%time\nimport gc\ngc.get_referrers(1)", "gc"),  # nor does a cell magic
    ("import autograder as ag\np = ag.problems.ch28.ring_allreduce\np.launch = print",
     "patching autograder"),                           # through an alias made by assignment
    ("x = ag.problems.ch02.vector_add\ntype(x).run_here = print", "patching a class"),
])
def test_the_static_pass_flags_reaching_into_the_harness(code, expected):
    flags = judge.flags_in(code)
    assert any(expected in f for f in flags), flags


def test_the_static_pass_leaves_ordinary_gpu_code_alone():
    code = textwrap.dedent('''
        import math
        import numpy as np
        from numba import cuda
        import autograder as ag

        @cuda.jit
        def k(x, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = math.sqrt(x[i]) + np.float32(1)

        def launch(x, out):
            k[(out.size + 255) // 256, 256](x, out)
            cuda.synchronize()
        ag.problems.ch02.vector_add
    ''')
    assert judge.flags_in(code) == []


def test_no_correct_bank_entry_is_flagged():
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from bank import SETUP, entries
    flagged = [e.id for e in entries() if e.kind == "ok" and judge.flags_in(SETUP + e.code)]
    assert flagged == []


@pytest.mark.parametrize("chapter", sorted(p.parent.name for p in
                                            Path(__file__).parents[1].glob("solutions/ch*/*.ipynb")))
def test_no_reference_solution_is_flagged(chapter):
    """The flags are for code an instructor should read: the course's own notebook, solved, must
    raise none (a chapter cell that imports from the checking code would flag every submission)."""
    import nbformat
    nb = nbformat.read(str(Path(__file__).parents[1] / "solutions" / chapter / f"{chapter}.ipynb"),
                       as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert judge.flags_in(code) == []


# ---- GPU: host copies at the driver -------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_a_host_copy_of_an_input_fails_the_call():
    def add_vectors(x, y, out):
        add_kernel[(out.size + 127) // 128, 128](x, y, out)
        x.copy_to_host()
    assert "`x` was copied to the host" in failure(vector_add, add_vectors)


@pytest.mark.gpu
def test_gpu_a_correct_launcher_counts_a_driver_launch():
    def add_vectors(x, y, out):
        add_kernel[(out.size + 127) // 128, 128](x, y, out)
    outcome = vector_add.run_here(add_vectors, vector_add.cases()[0])
    assert outcome.provenance["driver_launches"] >= 1 and not outcome.provenance["verdict"]


@pytest.mark.gpu
def test_gpu_numpy_on_the_host_written_back_fails():
    def add_vectors(x, y, out):
        nothing[1, 1](x)
        out.copy_to_device(x.copy_to_host() + y.copy_to_host())
    assert "was copied to the host" in failure(vector_add, add_vectors)


def test_no_launch_of_yours_names_the_exercise_s_kernel_language():
    """A right answer with no launch of the learner's: the hint names the decorator the exercise
    is written with (`@triton.jit` for a Triton exercise, not `@cuda.jit`)."""
    case = Case(size=4, inputs={})
    numba_hint = judge._launch_verdict(vector_add, case, {"student_launches": 0}).hint
    triton = next(p for p in ag.problems.ALL.values() if p.kernel_language == "triton")
    triton_hint = judge._launch_verdict(triton, case, {"student_launches": 0}).hint
    assert "`@cuda.jit`" in numba_hint and "`@triton.jit`" in triton_hint
