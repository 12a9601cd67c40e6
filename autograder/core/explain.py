"""Errors in plain words: what the learner did, not what the compiler went through.

``explain(exc)`` takes an exception (or its text) and returns an :class:`Explanation`: one short
paragraph saying what the code did and how to fix it, the thread and block where one is known, and
the original message underneath. It knows Numba's typing and lowering errors (a shared array
whose shape is not a compile-time constant, a Python list or a plain Python function used in a
kernel, a float index, a kernel that returns a value), the simulator's out-of-bounds
``IndexError`` (which thread of which block, and whether the grid overshoots), host/device array
mix-ups, launch mistakes (no ``[blocks, threads]``, a float block count, too many threads per
block) and, given the launch, a grid that does not cover the input.

In a notebook, :func:`install` adds a line in plain words under the traceback of any error raised
in a cell (``ag.explain_errors()``). ``autograder.learner.visual.code.gpu_compile_check`` compiles a
kernel with Numba's real CUDA front end in a child process and explains its errors with this
module: in CPU mode the simulator runs kernels as Python, so a kernel that passes there may still
not compile for a GPU.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass, field
from typing import Callable

MAX_THREADS_PER_BLOCK = 1024

# The names a kernel can use on `cuda` (for "did you mean" on a typo).
_CUDA_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "grid", "gridsize", "syncthreads",
               "shared", "local", "const", "atomic", "warpsize", "laneid", "shfl_sync",
               "shfl_down_sync", "shfl_up_sync", "shfl_xor_sync", "syncwarp", "ballot_sync",
               "activemask", "all_sync", "any_sync", "threadfence", "to_device", "device_array",
               "device_array_like", "synchronize", "jit", "fma", "cbrt", "popc", "clz", "ffs",
               "selp", "libdevice")


@dataclass(repr=False)
class Explanation:
    """A plain explanation of one error, with the original message kept."""

    kind: str
    text: str
    original: str = ""
    where: dict = field(default_factory=dict)   # thread, block, index, size, line where known

    def __str__(self) -> str:
        first = self.original.strip().splitlines()[0] if self.original.strip() else ""
        return f"In plain words: {self.text}" + (f"\n  (from: {first[:300]})" if first else "")

    __repr__ = __str__      # what a notebook without HTML shows

    def _repr_html_(self) -> str:
        return ('<div class="aag-explain" style="border-left:4px solid #e9a400;padding:4px 10px;'
                'margin:4px 0;background:rgba(233,164,0,0.08)"><b>In plain words:</b> '
                f"{html.escape(self.text)}</div>")


# ---------------------------------------------------------------------------------------------
# Rules: each looks at (exception type name, full message) and returns (kind, text, where)
# ---------------------------------------------------------------------------------------------
_SIM_OOB = re.compile(r"tid=\[(\d+), (\d+), (\d+)\] ctaid=\[(\d+), (\d+), (\d+)\]: index (-?\d+) is "
                      r"out of bounds for axis (\d+) with size (\d+)")
_SIM_TID = re.compile(r"tid=\[(\d+), (\d+), (\d+)\] ctaid=\[(\d+), (\d+), (\d+)\]: ")
_GPU_KERNEL_EXC = re.compile(r"An exception was raised in thread=\((\d+), (\d+), (\d+)\) "
                             r"block=\((\d+), (\d+), (\d+)\)")
_LINE = re.compile(r'(?:File "[^"]*", line (\d+)|at \S+ \((\d+)\))')


def _dims(x, y, z) -> str:
    """(3, 0, 0) -> "3"; (3, 1, 0) -> "(x=3, y=1)"."""
    if y == "0" and z == "0":
        return x
    if z == "0":
        return f"(x={x}, y={y})"
    return f"(x={x}, y={y}, z={z})"


def _thread_words(tid, ctaid) -> str:
    return f"thread {_dims(*tid)} of block {_dims(*ctaid)}"


def _first_line_number(message: str) -> int | None:
    for m in _LINE.finditer(message):
        return int(m.group(1) or m.group(2))
    return None


# Where threads work together, "do nothing" is the wrong advice: a thread that skips a barrier
# or a shuffle leaves the others waiting on it, or shuffling with a lane that is not there.
SPARE_THREADS_TOGETHER = (
    "In a kernel whose threads work together (a barrier, a warp shuffle), do not let them skip "
    "it: give the spare threads a value that changes nothing (0 for a sum) and let them take part.")


def _out_of_bounds(name: str, msg: str, ctx: dict):
    m = _SIM_OOB.search(msg)
    if not m:
        return None
    tid, ctaid = m.group(1, 2, 3), m.group(4, 5, 6)
    idx, axis, size = int(m.group(7)), int(m.group(8)), int(m.group(9))
    where = {"thread": tuple(map(int, tid)), "block": tuple(map(int, ctaid)), "index": idx,
             "axis": axis, "size": size}
    who = _thread_words(tid, ctaid)
    text = (f"{who} used index {idx} on an array whose axis {axis} has {size} elements "
            f"(valid: 0 to {size - 1}).")
    if idx < 0:
        text += (" A negative index means the index arithmetic went below zero (a neighbour at "
                 "i - 1 for i = 0?): check the left edge too.")
    elif tid[1:] == ("0", "0") and ctaid[1:] == ("0", "0") and axis == 0:
        text += (" The grid has more threads than elements, which is normal: guard the body with "
                 "`if i < n:` so the spare threads do nothing. " + SPARE_THREADS_TOGETHER)
    else:
        text += (" Guard every coordinate (`if row < rows and col < cols:`), and check that each "
                 "index runs over its own dimension: the column from x, the row from y.")
    cover = _coverage_words(ctx)
    if cover:
        text += " " + cover
    return "out_of_bounds", text, where


def _gpu_kernel_exception(name: str, msg: str, ctx: dict):
    m = _GPU_KERNEL_EXC.search(msg)
    if not m:
        return None
    tid, ctaid = m.group(1, 2, 3), m.group(4, 5, 6)
    inner = msg[m.end():].strip().splitlines()[0] if msg[m.end():].strip() else "an exception"
    return ("kernel_exception",
            f"{_thread_words(tid, ctaid)} raised {inner}. With debug=True every thread checks "
            "its indices; an out-of-bounds index usually means a missing `if i < n:` guard.",
            {"thread": tuple(map(int, tid)), "block": tuple(map(int, ctaid))})


def _illegal_address(name: str, msg: str, ctx: dict):
    if "ILLEGAL_ADDRESS" not in msg.upper():
        return None
    return ("illegal_address",
            "a thread read or wrote memory outside every array (a missing `if i < n:` guard, or "
            "an index computed from the wrong dimension; the checks place each input at the very "
            "end of its memory, so one element read past an input's end is enough). The GPU "
            "does not say which thread; run "
            "the kernel in CPU mode (AAG_BACKEND=cpu) to have it named. This process's GPU "
            "context is now broken: restart the notebook's kernel.", {})


def _launch_config(name: str, msg: str, ctx: dict):
    if "launch configuration was not specified" in msg:
        return ("no_launch_config",
                "the kernel was called like a Python function. A kernel is launched with its grid "
                "in square brackets: `kernel[blocks, threads_per_block](args...)`.", {})
    m = re.search(r"(griddim|blockdim) must be a sequence of integers, got (.*)", msg)
    if m:
        what = "number of blocks" if m.group(1) == "griddim" else "number of threads per block"
        return ("float_launch_dims",
                f"the {what} is not an integer ({m.group(2).strip()}): `/` always gives a float "
                "in Python. Compute it with integer division: `blocks = (n + threads - 1) // "
                "threads`.", {})
    if "CUDA_ERROR_INVALID_VALUE" in msg and ("cuLaunchKernel" in msg or "launch" in msg.lower()):
        return ("bad_launch",
                f"the GPU refused the launch: most often more than {MAX_THREADS_PER_BLOCK} "
                "threads per block (x·y·z together), a grid dimension of 0, or more shared "
                "memory than a block may have.", {})
    return None


def _shared_shape(name: str, msg: str, ctx: dict):
    m = re.search(r"Function\(<function (shared|local|const)\.(array|array_like)", msg)
    if not m or "No implementation" not in msg:
        return None
    kind = m.group(1)
    call = re.search(r">>> \w+\((.*)\)\s*$", msg, re.M)
    args = call.group(1) if call else ""
    shape = args.split(", class(")[0] if ", class(" in args else args.split(",")[0]
    if "Literal[int]" in shape or re.fullmatch(r"UniTuple\(Literal.*", shape or "-"):
        return (f"{kind}_dtype",
                f"`cuda.{kind}.array(shape, dtype)` got a dtype Numba does not know: use a Numba "
                "or NumPy scalar type such as `float32`, `np.float32` or `int32`.", {})
    return (f"{kind}_shape",
            f"the shape of a `cuda.{kind}.array` must be fixed when the kernel is compiled, but "
            f"here it is a run-time value ({shape or 'a variable'}): a kernel argument, "
            "`x.size`, or a variable computed in the kernel. Use a number (`256`), or a constant "
            "defined outside the kernel (`TILE = 16` at the top of the cell, then "
            "`cuda.shared.array((TILE, TILE), float32)`). For a size known only at launch, "
            "use dynamic shared memory: `cuda.shared.array(0, float32)` and "
            "`kernel[blocks, threads, 0, nbytes](...)`.", {})


def _python_list(name: str, msg: str, ctx: dict):
    if "NRT required but not enabled" not in msg and "reflected list" not in msg:
        return None
    line = _first_line_number(msg)
    at = f" (line {line})" if line else ""
    if "build_list" in msg:
        return ("python_list",
                f"the kernel builds a Python list{at}. GPU code cannot create lists (they need "
                "memory allocated while the kernel runs): use a tuple for a few constants, "
                "`(1.0, 2.0, 1.0)`, or a per-thread array, `cuda.local.array(3, float32)`.",
                {"line": line})
    if "reflected list" in msg or _has_list_arg(ctx):
        return ("list_argument",
                f"a Python list was passed to the kernel{at}. Kernels take arrays: "
                "`np.array(values, dtype=np.float32)` (copied to the GPU with `cuda.to_device`).",
                {"line": line})
    if re.search(r"np\.(zeros|empty|ones)|numpy\.(zeros|empty|ones)|arrayobj|empty_like", msg):
        return ("numpy_alloc",
                f"the kernel creates a NumPy array{at}; GPU code cannot allocate memory while it "
                "runs. Use `cuda.local.array(N, float32)` (per thread) or "
                "`cuda.shared.array(N, float32)` (per block) with a constant N, or pass an "
                "output array in.", {"line": line})
    return ("needs_allocation",
            f"something in the kernel{at} needs memory allocated while it runs (a Python list, "
            "a NumPy array created inside the kernel, a list argument, string formatting). GPU "
            "code cannot do that: use tuples, `cuda.local.array` with a constant size, or arrays "
            "passed in as arguments.", {"line": line})


def _has_list_arg(ctx: dict) -> bool:
    return any(isinstance(a, list) for a in ctx.get("args", ()))


def _untyped_global(name: str, msg: str, ctx: dict):
    m = re.search(r"Untyped global name '(\w+)'.*?Cannot determine Numba type of <class '([\w.]+)'>",
                  msg, re.S)
    if not m:
        return None
    var, cls = m.group(1), m.group(2)
    line = _first_line_number(msg[m.end():]) or _first_line_number(msg)
    where = {"line": line, "name": var}
    if cls == "function":
        return ("python_function",
                f"the kernel calls `{var}`, a plain Python function. GPU code can only call "
                f"functions compiled for the GPU: put `@cuda.jit(device=True)` above "
                f"`def {var}`, or use a function from `math`.", where)
    if cls in ("list", "dict", "set"):
        return ("global_container",
                f"the kernel uses `{var}`, a Python {cls} defined outside it. A kernel can read "
                "global numbers and tuples (fixed when it compiles) but not lists or dicts: make "
                "it a tuple, or pass a NumPy array as an argument.", where)
    if "FakeCUDA" in cls or "Dispatcher" in cls:
        return ("kernel_call",
                f"the kernel calls `{var}`, which is a kernel. A kernel cannot launch another "
                f"like this: make `{var}` a device function with `@cuda.jit(device=True)`.", where)
    return ("untyped_global",
            f"the kernel uses `{var}` (a {cls}), which Numba cannot use in GPU code: kernels see "
            "numbers, tuples, arrays, `math`, `cuda` and device functions.", where)


def _name_error(name: str, msg: str, ctx: dict):
    m = re.search(r"NameError: name '(\w+)' is not defined", msg) or (
        name == "NameError" and re.search(r"name '(\w+)' is not defined", msg))
    if not m:
        return None
    return ("undefined_name",
            f"`{m.group(1)}` is not defined where the kernel looks for it: a typo, or a cell "
            "that defines it has not been run yet.", {"name": m.group(1)})


def _float_index(name: str, msg: str, ctx: dict):
    if not (re.search(r"Unsupported array index type (float\d+)", msg) or
            ("only integers, slices" in msg and "valid indices" in msg)):
        return None
    where = _sim_where(msg)
    who = f"{_thread_words(*where)} " if where else ""
    return ("float_index",
            f"{who}indexed an array with a float. In Python `/` always gives a float (`7 / 2` is "
            "3.5): use `//` for integer division, or compute the index from integers only.",
            _where_dict(where))


def _too_many_indices(name: str, msg: str, ctx: dict):
    m = re.search(r"cannot index array\((\w+), (\d)d, \w+\) with (\d) indices", msg)
    sim = re.search(r"too many indices for array: array is (\d)-dimensional, but (\d) were", msg)
    if not (m or sim):
        return None
    ndim, used = (m.group(2), m.group(3)) if m else (sim.group(1), sim.group(2))
    return ("wrong_dimensions",
            f"an array with {ndim} dimension{'s' * (ndim != '1')} is indexed with {used} "
            f"indices. A 2-D image is `img[row, col]`; a 1-D array takes one index (flatten "
            "with `row * width + col`).", _where_dict(_sim_where(msg)))


def _unify(name: str, msg: str, ctx: dict):
    m = re.search(r"Cannot unify (.+?) and (.+?) for '([\w.]+)'", msg)
    if not m:
        return None
    var = m.group(3).split(".")[0]
    return ("unify",
            f"the variable `{var}` holds a {_type_words(m.group(1))} in one place and a "
            f"{_type_words(m.group(2))} in another. In a kernel each variable keeps one type: "
            f"give `{var}` the same kind of value on every path (e.g. start a float32 sum with "
            "`acc = float32(0)`, not `acc = 0`).", {"name": var, "line": _first_line_number(msg)})


def _type_words(t: str) -> str:
    t = t.strip()
    if t.startswith(("Literal[int]", "int")):
        return "an integer" if t.startswith("int") else f"integer ({t})"
    if t.startswith("float"):
        return f"float ({t})"
    if t.startswith(("Tuple", "UniTuple")):
        return f"tuple ({t})"
    if t.startswith("array"):
        return f"array ({t})"
    return t


def _setitem(name: str, msg: str, ctx: dict):
    m = re.search(r">>> setitem\(array\((\w+), (\d)d, \w+\), (.+), ([^,()]+(?:\([^)]*\))?)\)\s*$",
                  msg, re.M)
    if not m:
        return None
    dtype, value = m.group(1), m.group(4).strip()
    if value in ("Dim3", "dim3"):
        return ("store_dim3",
                "the kernel stores `cuda.threadIdx` (or blockIdx, blockDim: a triple x, y, z) "
                "into an array. Store one of its numbers: `cuda.threadIdx.x`.", {})
    if re.match(r"(int|uint)\d+", dtype) and re.match(r"(float|complex)\d+", value):
        return ("float_into_int",
                f"the kernel stores a {value} value into an array of {dtype}. Store an integer "
                "(`int(...)`, or `//` instead of `/`), or make the array a float array.", {})
    return ("bad_store",
            f"the kernel stores a {value} into an array of {dtype}; an array element can only "
            "hold a number of its own kind.", {})


def _void_return(name: str, msg: str, ctx: dict):
    if "kernel must have void return type" not in msg:
        return None
    return ("kernel_return",
            "a kernel cannot return a value: it runs once per thread and nobody receives the "
            "result. Write the result into an output array (`out[i] = ...`) and drop the "
            "`return value`.", {})


def _attribute(name: str, msg: str, ctx: dict):
    m = re.search(r"(?:module 'numba\.cuda'|'FakeCUDAModule' object) has no attribute '(\w+)'", msg)
    if m:
        wrong = m.group(1)
        guess = difflib.get_close_matches(wrong, _CUDA_NAMES, n=1, cutoff=0.6)
        hint = f" Did you mean `cuda.{guess[0]}`?" if guess else ""
        sim = _sim_where(msg)
        return ("cuda_typo", f"`cuda.{wrong}` does not exist.{hint} (Names are case-sensitive: "
                "threadIdx, blockIdx, blockDim, gridDim.)", _where_dict(sim))
    m = re.search(r"'numpy\.ndarray' object has no attribute '(copy_to_host|copy_to_device|"
                  r"gpu_data|device_ctypes_pointer)'", msg)
    if m:
        return ("host_array",
                f"`.{m.group(1)}()` was called on a NumPy array, which already lives in host "
                "memory. Device arrays come from `cuda.to_device(x)` or "
                "`cuda.device_array(n, np.float32)`; pass those to the kernel and call "
                "`.copy_to_host()` on them.", {})
    m = re.search(r"unsupported operand type\(s\) for .+: '(DeviceNDArray|FakeCUDAArray)'", msg) or \
        re.search(r"'(DeviceNDArray)' object has no attribute '(sum|mean|max|min|reshape|astype)'", msg)
    if m:
        return ("device_array_on_host",
                "a device array was used in host (NumPy) code. Copy it back first: "
                "`result = d_out.copy_to_host()`, then compute with `result`.", {})
    return None


def _not_a_kernel(name: str, msg: str, ctx: dict):
    if "'function' object is not subscriptable" not in msg:
        return None
    return ("missing_jit",
            "a plain Python function was launched like a kernel (`f[blocks, threads](...)`): "
            "put `@cuda.jit` on the line above its `def`, and run that cell again.", {})


def _not_implemented(name: str, msg: str, ctx: dict):
    if name != "NotImplementedError" and "NotImplementedError" not in msg.split("\n")[0]:
        return None
    return ("not_implemented", "the exercise cell still says `raise NotImplementedError()`: "
            "replace that line with your code.", _where_dict(_sim_where(msg)))


def _sim_where(msg: str):
    m = _SIM_TID.search(msg)
    return (m.group(1, 2, 3), m.group(4, 5, 6)) if m else None


def _where_dict(where) -> dict:
    if not where:
        return {}
    return {"thread": tuple(map(int, where[0])), "block": tuple(map(int, where[1]))}


RULES: list[Callable] = [_not_implemented, _not_a_kernel, _out_of_bounds, _gpu_kernel_exception, _illegal_address,
                         _launch_config, _shared_shape, _python_list, _untyped_global,
                         _name_error, _float_index, _too_many_indices, _unify, _setitem,
                         _void_return, _attribute]


# ---------------------------------------------------------------------------------------------
# Launch coverage
# ---------------------------------------------------------------------------------------------
def _prod(v) -> int:
    if isinstance(v, (tuple, list)):
        out = 1
        for d in v:
            out *= int(d)
        return out
    return int(v)


def coverage(blocks, threads, n) -> str:
    """Words about a launch that has fewer threads than elements (or too many per block);
    "" when it covers ``n``. ``blocks``/``threads``/``n`` may be ints or (x, y[, z]) tuples."""
    if _prod(threads) > MAX_THREADS_PER_BLOCK:
        return (f"A block of {_prod(threads)} threads is more than the {MAX_THREADS_PER_BLOCK} "
                "a GPU allows (the simulator does not check this; a GPU refuses the launch).")
    if isinstance(n, (tuple, list)) and isinstance(blocks, (tuple, list)):
        # (rows, cols) against CUDA's (x, y): x covers columns, y covers rows.
        t = tuple(threads) + (1,) * (3 - len(threads))
        b = tuple(blocks) + (1,) * (3 - len(blocks))
        cols, rows = int(n[-1]), int(n[-2]) if len(n) > 1 else 1
        have_x, have_y = b[0] * t[0], b[1] * t[1]
        short = []
        if have_x < cols:
            short.append(f"x covers {have_x} columns of {cols}")
        if have_y < rows:
            short.append(f"y covers {have_y} rows of {rows}")
        if short:
            return ("The grid does not cover the input: " + " and ".join(short) + ". Use "
                    "`blocks = ((cols + tx - 1) // tx, (rows + ty - 1) // ty)` (x first).")
        return ""
    total, size = _prod(blocks) * _prod(threads), _prod(n)
    if total < size:
        return (f"The grid has {_prod(blocks)} × {_prod(threads)} = {total} threads for n = "
                f"{size} elements, so elements {total} to {size - 1} get no thread: use "
                f"`blocks = (n + threads - 1) // threads` = {(size + _prod(threads) - 1) // _prod(threads)}"
                ", or a grid-stride loop.")
    return ""


def _coverage_words(ctx: dict) -> str:
    launch, n = ctx.get("launch"), ctx.get("n")
    if not launch or n is None:
        return ""
    blocks, threads = launch
    text = coverage(blocks, threads, n)
    if text:
        return text
    total = _prod(blocks) * _prod(threads)
    if not isinstance(n, (tuple, list)) and total > _prod(n):
        return (f"(The launch has {total} threads for n = {_prod(n)} elements: the last "
                f"{total - _prod(n)} threads must do nothing.)")
    return ""


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------
def _message_of(exc) -> tuple[str, str]:
    if isinstance(exc, BaseException):
        return type(exc).__name__, f"{type(exc).__name__}: {exc}"
    text = str(exc)
    m = re.match(r"\s*([\w.]+(?:Error|Exception|Exit|Interrupt))\b", text)
    return (m.group(1).rsplit(".", 1)[-1] if m else ""), text


def explain(exc, kernel=None, launch=None, n=None, args=()) -> Explanation | None:
    """Explain an exception (or its text) in plain words; None when nothing specific is known.

    ``launch=(blocks, threads)`` and ``n`` (the input's length or shape) let it say whether the
    grid covers the input; ``args`` are the launch's arguments (a Python list among them is
    named)."""
    name, message = _message_of(exc)
    ctx = {"kernel": kernel, "launch": launch, "n": n, "args": args}
    for rule in RULES:
        try:
            found = rule(name, message, ctx)
        except Exception:   # a rule that trips over an odd message must not hide the error
            found = None
        if found:
            kind, text, where = found
            return Explanation(kind, text, message, where)
    if launch is not None and n is not None:
        cover = coverage(launch[0], launch[1], n)
        if cover:
            return Explanation("grid_too_small", cover, message, {})
    return None


def explain_text(message: str) -> str:
    """The plain explanation of an error's text, or "" (for verdicts and the code viewer)."""
    found = explain(message)
    return found.text if found else ""


# ---------------------------------------------------------------------------------------------
# IPython: a plain line under every error in the learner's cells
# ---------------------------------------------------------------------------------------------
_installed: dict = {"shell": None, "callback": None}


def _show(explanation: Explanation) -> None:
    try:
        from IPython.display import display
        display(explanation)
    except ImportError:
        print(explanation)


def _after_cell(result) -> None:
    exc = getattr(result, "error_in_exec", None)
    if exc is None:
        return
    if getattr(exc, "verdict", None) is not None:   # a CheckFailed: its verdict has its own hint
        return
    found = explain(exc)
    if found:
        _show(found)


def install(shell=None) -> bool:
    """Explain errors raised in the notebook's cells (``ag.explain_errors()``); idempotent.
    Uses IPython's ``post_run_cell`` event, so the course's own verdict display is untouched."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    if _installed["shell"] is shell:
        return True
    if _installed["shell"] is not None:
        uninstall()
    shell.events.register("post_run_cell", _after_cell)
    _installed.update(shell=shell, callback=_after_cell)
    return True


def uninstall() -> None:
    shell = _installed["shell"]
    if shell is not None:
        try:
            shell.events.unregister("post_run_cell", _installed["callback"])
        except ValueError:
            pass
    _installed.update(shell=None, callback=None)
