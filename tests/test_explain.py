"""Errors in plain words: is each mistake produced for real (by the simulator, or by Numba's CUDA
front end compiling for a GPU in a child process) and explained as what the learner did?"""

import inspect
import re
import types

import numpy as np
import pytest

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda, float32

from autograder import explain
from autograder.visual import code


def raised(fn):
    try:
        fn()
    except Exception as exc:   # noqa: BLE001 - the point is to catch what the learner would see
        return exc
    raise AssertionError("expected an exception")


# ---- kernels with the mistakes learners make -------------------------------------------------
@cuda.jit
def unguarded(out):
    i = cuda.grid(1)
    out[i] = i                                  # no `if i < out.size:`


@cuda.jit
def unguarded_2d(img):
    col, row = cuda.grid(2)
    img[row, col] = 1.0


@cuda.jit
def float_index(x):
    i = cuda.grid(1) / 2                        # `/` makes a float
    x[i] = 1.0


@cuda.jit
def two_indices(x):
    i = cuda.grid(1)
    x[i, 0] = 1.0


@cuda.jit
def typo(x):
    x[0] = cuda.threadidx.x


@cuda.jit
def not_written_yet(x):
    raise NotImplementedError()


@cuda.jit
def shared_of_runtime_size(x, n):
    tile = cuda.shared.array(n, float32)        # n is an argument: not a compile-time constant
    tile[0] = x[0]
    x[0] = tile[0]


@cuda.jit
def builds_a_list(out):
    weights = [0.25, 0.5, 0.25]                  # a Python list in a kernel
    out[0] = weights[1]


def plain_helper(v):
    return v * 2


@cuda.jit
def calls_plain_python(x):
    x[0] = plain_helper(x[0])


@cuda.jit
def returns_a_value(x):
    return x[0]


@cuda.jit
def changes_type(x):
    if cuda.grid(1) < 3:
        v = 1
    else:
        v = (1, 2)
    x[0] = v


@cuda.jit
def indexes_with_a_list_argument(out, weights):
    out[0] = weights[0]


@cuda.jit
def stores_a_float_in_ints(x, counts):
    i = cuda.grid(1)
    if i < counts.size:
        counts[i] = x[i] * 0.5                  # the fraction is dropped, silently


@cuda.jit
def fine(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i]


V = np.zeros(16, np.float32)


@pytest.fixture(scope="module")
def gpu_compiled():
    """The kernels the simulator runs happily but a GPU would not compile: compiled for real
    (Numba's CUDA front end; no GPU, no toolkit needed), all in one child process."""
    requests = [(shared_of_runtime_size, (V, np.int32(4)), None), (builds_a_list, (V,), None),
                (calls_plain_python, (V,), None), (returns_a_value, (V,), None),
                (changes_type, (V,), None), (indexes_with_a_list_argument, (V, [1.0, 2.0]), None),
                (float_index, (V,), None), (stores_a_float_in_ints, (V, np.zeros(16, np.int32)), None),
                (fine, (V, V), None)]
    names = ["shared", "list", "python", "return", "unify", "list_arg", "float_index",
             "float_int", "fine"]
    return dict(zip(names, code.compile_kernels(requests, cc=(9, 0))))


def explained(view, **ctx):
    assert view.error, f"{view.name} compiled, but a GPU would refuse it"
    found = explain.explain(f"{view.error['type']}: {view.error['message']}", **ctx)
    assert found is not None, view.error["message"]
    return found


def line_of(kernel, marker):
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


# ---- the simulator (CPU mode) ----------------------------------------------------------------
def test_out_of_bounds_names_the_thread_and_block_and_the_grid():
    exc = raised(lambda: unguarded[3, 4](np.zeros(10, np.int32)))
    assert isinstance(exc, IndexError)
    found = explain.explain(exc, launch=(3, 4), n=10)
    assert found.kind == "out_of_bounds"
    tid = re.search(r"tid=\[(\d+)", str(exc)).group(1)
    assert found.where["block"] == (2, 0, 0) and found.where["thread"] == (int(tid), 0, 0)
    assert found.where["index"] == 4 * 2 + int(tid) and found.where["size"] == 10
    assert f"thread {tid} of block 2 used index {8 + int(tid)}" in found.text
    assert "`if i < n:`" in found.text
    # ... but not where threads work together (10.2's shuffles): there the spare ones take part
    assert "warp shuffle), do not let them skip it" in found.text
    assert "12 threads for n = 10 elements: the last 2 threads must do nothing" in found.text
    assert "IndexError" in found.original and "In plain words:" in str(found)


def test_out_of_bounds_on_a_2d_grid_asks_for_both_guards():
    exc = raised(lambda: unguarded_2d[(2, 2), (4, 4)](np.zeros((6, 8), np.float32)))
    found = explain.explain(exc)
    assert found.kind == "out_of_bounds"
    assert "Guard every coordinate" in found.text and "the column from x, the row from y" in found.text
    assert "of block (x=" in found.text


def test_a_grid_that_does_not_cover_the_input():
    assert explain.coverage(3, 128, 1000) == (
        "The grid has 3 × 128 = 384 threads for n = 1000 elements, so elements 384 to 999 get no "
        "thread: use `blocks = (n + threads - 1) // threads` = 8, or a grid-stride loop.")
    assert explain.coverage(8, 128, 1000) == ""
    assert "x covers 16 columns of 37" in explain.coverage((1, 2), (16, 8), (13, 37))
    assert explain.coverage((3, 2), (16, 8), (13, 37)) == ""
    assert "more than the 1024" in explain.coverage(1, 2048, 100)
    found = explain.explain(RuntimeError("wrong values"), launch=(3, 128), n=1000)
    assert found.kind == "grid_too_small"


def test_float_index_in_the_simulator():
    found = explain.explain(raised(lambda: float_index[1, 4](np.zeros(4, np.float32))))
    assert found.kind == "float_index" and "use `//`" in found.text
    assert found.where["block"] == (0, 0, 0) and found.text.startswith("thread ")


def test_too_many_indices_in_the_simulator():
    found = explain.explain(raised(lambda: two_indices[1, 4](np.zeros(4, np.float32))))
    assert found.kind == "wrong_dimensions"
    assert "1 dimension is indexed with 2 indices" in found.text


def test_misspelled_cuda_name():
    found = explain.explain(raised(lambda: typo[1, 1](np.zeros(4, np.float32))))
    assert found.kind == "cuda_typo" and "Did you mean `cuda.threadIdx`?" in found.text


def test_kernel_called_without_a_launch_configuration():
    found = explain.explain(raised(lambda: fine(V, V)))
    assert found.kind == "no_launch_config" and "kernel[blocks, threads_per_block]" in found.text


def test_a_float_number_of_blocks():
    found = explain.explain(raised(lambda: fine[10 / 4, 4](V, V)))
    assert found.kind == "float_launch_dims"
    assert "number of blocks" in found.text and "(n + threads - 1) // threads" in found.text


def test_host_array_where_a_device_array_was_meant():
    found = explain.explain(raised(lambda: np.zeros(3).copy_to_host()))
    assert found.kind == "host_array" and "cuda.to_device(x)" in found.text


def test_a_function_without_cuda_jit_launched_as_a_kernel():
    def saxpy(a, x, y, out):
        pass
    found = explain.explain(raised(lambda: saxpy[4, 32](1.0, V, V, V)))
    assert found.kind == "missing_jit" and "@cuda.jit" in found.text
    assert repr(found).startswith("In plain words: a plain Python function")


def test_not_implemented_yet():
    found = explain.explain(raised(lambda: not_written_yet[1, 1](V)))
    assert found.kind == "not_implemented"


def test_unknown_errors_are_left_alone():
    assert explain.explain(KeyError("x")) is None
    assert explain.explain_text("ZeroDivisionError: division by zero") == ""


# ---- Numba's CUDA front end: what a GPU would refuse -------------------------------------------
def test_shared_array_of_run_time_size(gpu_compiled):
    found = explained(gpu_compiled["shared"])
    assert found.kind == "shared_shape"
    assert "fixed when the kernel is compiled" in found.text and "TILE = 16" in found.text


def test_python_list_in_a_kernel(gpu_compiled):
    found = explained(gpu_compiled["list"])
    assert found.kind == "python_list"
    assert f"(line {line_of(builds_a_list, 'weights = [')})" in found.text
    assert "cuda.local.array(3, float32)" in found.text


def test_list_passed_as_an_argument(gpu_compiled):
    found = explained(gpu_compiled["list_arg"], args=(V, [1.0, 2.0]))
    assert found.kind == "list_argument" and "np.array(values" in found.text


def test_plain_python_function_called_from_a_kernel(gpu_compiled):
    found = explained(gpu_compiled["python"])
    assert found.kind == "python_function"
    assert "`plain_helper`" in found.text and "@cuda.jit(device=True)" in found.text


def test_kernel_that_returns_a_value(gpu_compiled):
    assert explained(gpu_compiled["return"]).kind == "kernel_return"


def test_variable_that_changes_type(gpu_compiled):
    found = explained(gpu_compiled["unify"])
    assert found.kind == "unify" and "`v`" in found.text


def test_float_index_on_a_gpu(gpu_compiled):
    found = explained(gpu_compiled["float_index"])
    assert found.kind == "float_index" and "use `//`" in found.text


def test_float_stored_into_an_int_array_is_noted(gpu_compiled):
    view = gpu_compiled["float_int"]
    assert view.error is None       # Numba accepts it (and truncates): a note, not an error
    note = next(n for n in view.notes if n["kind"] == "float_into_int")
    assert note["line"] == line_of(stores_a_float_in_ints, "counts[i] =")
    assert "float64 value into `counts`, an array of int32" in note["text"]


def test_gpu_compile_check(gpu_compiled, monkeypatch):
    """The notebook-facing call: None when the kernel compiles, an explanation when not (the
    results above are cached, so this starts no process)."""
    def no_child(*args):
        raise AssertionError("compiled again: the cache missed")
    monkeypatch.setattr(code, "_run_child", no_child)
    assert code.gpu_compile_check(fine, V, V, cc=(9, 0)) is None
    found = code.gpu_compile_check(shared_of_runtime_size, V, np.int32(4), cc=(9, 0))
    assert found.kind == "shared_shape"


# ---- messages seen only on a GPU (their text is numba-cuda's and the driver's) -----------------
def test_gpu_only_messages():
    illegal = ("CudaAPIError: [700] Call to cuMemcpyDtoH results in CUDA_ERROR_ILLEGAL_ADDRESS")
    assert explain.explain(illegal).kind == "illegal_address"
    launch = "CudaAPIError: [1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE"
    assert "1024" in explain.explain(launch).text
    debug = ("KernelRuntimeError: An exception was raised in thread=(5, 0, 0) block=(3, 0, 0)\n"
             "\tIndexError: index is out of bounds")
    found = explain.explain(debug)
    assert found.where == {"thread": (5, 0, 0), "block": (3, 0, 0)}
    assert found.text.startswith("thread 5 of block 3 raised IndexError")


# ---- the notebook hook -----------------------------------------------------------------------
class FakeEvents:
    def __init__(self):
        self.callbacks = {}

    def register(self, name, fn):
        self.callbacks.setdefault(name, []).append(fn)

    def unregister(self, name, fn):
        self.callbacks[name].remove(fn)


def test_ipython_hook_explains_errors_but_not_verdicts(monkeypatch, capsys):
    from autograder.checks import CheckFailed, Verdict
    shell = types.SimpleNamespace(events=FakeEvents())
    shown = []
    monkeypatch.setattr(explain, "_show", shown.append)
    try:
        assert explain.install(shell) and explain.install(shell)     # idempotent
        assert len(shell.events.callbacks["post_run_cell"]) == 1
        hook = shell.events.callbacks["post_run_cell"][0]
        hook(types.SimpleNamespace(error_in_exec=raised(lambda: fine(V, V))))
        hook(types.SimpleNamespace(error_in_exec=CheckFailed(Verdict("saxpy", False))))
        hook(types.SimpleNamespace(error_in_exec=None))
        assert [e.kind for e in shown] == ["no_launch_config"]
        assert 'class="aag-explain"' in shown[0]._repr_html_()
    finally:
        explain.uninstall()
    assert shell.events.callbacks["post_run_cell"] == []


def test_an_error_in_a_kernel_shows_the_learners_frames_only(capsys):
    """A kernel's IndexError in CPU mode went through 13 frames of the simulator (threads, the
    simulator's arrays) before the learner's own line: the notebook shows the learner's frames,
    says how many were left out, and ends with the error (the plain-words line follows it)."""
    from IPython.core.interactiveshell import InteractiveShell

    from autograder.learner import notebook

    @cuda.jit
    def past_the_end(a):
        a[cuda.grid(1) + 100] = 1

    try:
        past_the_end[1, 4](np.zeros(10))
    except IndexError as exc:
        error = exc
    else:
        pytest.skip("this backend does not raise on an out-of-bounds store")
    trimmed, hidden = notebook.trim_traceback(error.__traceback__)
    names = []
    while trimmed is not None:
        names.append(trimmed.tb_frame.f_code.co_filename)
        trimmed = trimmed.tb_next
    assert hidden >= 5 and names and all(n == __file__ for n in names), (hidden, names)
    shell = InteractiveShell.instance()
    stb = notebook._show_error(shell, IndexError, error, error.__traceback__)
    text = "\n".join(stb)
    assert "past_the_end" in text and "frames inside Numba's CUDA simulator" in text
    assert "threading.py" not in text and "devicearray" not in text
    assert stb[-1].endswith(str(error)) and "IndexError" in stb[-1]
    # a failed check stays a verdict: one line, no frames
    from autograder.core.checks import CheckFailed, Verdict
    failed = CheckFailed(Verdict("add", False, "n = 3", "wrong"))
    assert len(notebook._show_error(shell, CheckFailed, failed, None)) == 1


def test_an_isolated_cell_that_fails_gets_the_plain_words_line(capsys):
    """An %%isolated cell whose process fails ends with the same plain-words line."""
    from autograder.learner import notebook
    if autograder.backend.is_gpu:
        pytest.skip("the out-of-bounds store raises only in CPU mode")
    code = ("import numpy as np\nfrom numba import cuda\n@cuda.jit\ndef k(a):\n"
            "    a[cuda.grid(1) + 100] = 1\nk[1, 4](np.zeros(10))\n")
    assert notebook.run_isolated(code) == 1
    out = capsys.readouterr().out
    assert "In plain words:" in out and out.rstrip().splitlines()[-1].startswith("In plain words")
