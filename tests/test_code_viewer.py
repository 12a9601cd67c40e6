"""The code viewer: does a learner's kernel compile to PTX and SASS without a GPU, with shared
loads, barriers, shuffles and local memory pointed out, the compiler's registers and shared memory
shown, and an exact install message where the toolkit wheels are missing?

The kernels below are simulator kernels in CPU mode (the process's ``numba.cuda`` is the
simulator); the viewer compiles them for a real GPU in a child process."""

import inspect

import numpy as np
import pytest

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda, float32

from autograder.visual import code

TILE = 16


@cuda.jit
def tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[row, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()                          # BARRIER-1
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()                          # BARRIER-2
    C[row, col] = acc


@cuda.jit
def big_local(x, out):
    scratch = cuda.local.array(1024, float32)       # indexed at run time: cannot be registers
    i = cuda.grid(1)
    for k in range(1024):
        scratch[k] = x[(i + k) % x.size]
    acc = float32(0)
    for k in range(1024):
        acc += scratch[(k * 7 + i) % 1024]
    out[i] = acc


@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit(device=True)
def squared(v):
    return v * v


@cuda.jit
def calls_device(x, out):
    i = cuda.grid(1)
    if i < out.size:
        acc = 0.0                                    # a Python float: float64
        for k in range(x.size):
            acc += squared(x[k])                     # float64 arithmetic: noted
        out[i] = acc


@cuda.jit
def truncates(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * float32(2.5)                 # a float into an int32 array: noted


def line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


SIG_SAXPY = "float32, float32[::1], float32[::1], float32[::1]"


@pytest.fixture(scope="module")
def tools():
    found = code.find_toolkit()
    if not (found.get("nvvm") and found.get("nvrtc")):
        pytest.skip("the CUDA toolkit wheels are not installed (AAG_EXTRAS=cuda13 ./aag test); "
                    "the tests of typing notes and of the install message run without them")
    return found


@pytest.fixture(scope="module")
def views():
    """All kernels compiled in one child process (a few seconds): to PTX and SASS where the
    toolkit is installed, else through Numba's type inference only (enough for the notes)."""
    m = np.zeros((32, 32), np.float32)
    v = np.zeros(64, np.float32)
    requests = [(tiled, (m, m, m), None), (big_local, (v, v), None), (warp_sum, (v, v), None),
                (saxpy, (), SIG_SAXPY), (calls_device, (v, v), None),
                (truncates, (v, np.zeros(64, np.int32)), None)]
    return dict(zip(["tiled", "big_local", "warp_sum", "saxpy", "calls_device", "truncates"],
                    code.compile_kernels(requests, cc=(9, 0))))


def test_tiled_kernel_shows_shared_loads_and_barriers(views, tools):
    view = views["tiled"]
    assert view.error is None
    ptx = view.ptx
    assert "ld.shared" in ptx and "st.shared" in ptx and "bar.sync" in ptx
    counts = view.counts()
    assert counts["barrier"] == 2 and counts["shared_load"] >= TILE and counts["shared_store"] == 2
    per_line = view.by_source_line()
    assert per_line[line_of(tiled, "BARRIER-1")] == {"barrier": 1}
    assert per_line[line_of(tiled, "BARRIER-2")] == {"barrier": 1}
    assert "shared_load" in per_line[line_of(tiled, "acc += sA")]
    assert view.shared_array_bytes() == 2 * TILE * TILE * 4
    # ptxas counts the 1 KB the system reserves per block on sm_80 and later (chapter 4)
    assert view.resources.shared_bytes == 2 * TILE * TILE * 4 + 1024
    assert "3,072 B shared memory per block (2,048 B in your shared arrays, 1,024 B that the " \
        "system reserves per block)" in view.summary()
    assert view.resources.registers and view.resources.registers < 255
    assert view.resources.local_total == 0 and "(no spills)" in view.summary()


def test_tiled_kernel_html_has_the_contract_classes_and_highlights(views, tools):
    page = views["tiled"]._repr_html_()
    assert page.startswith('<div class="aag-visual aag-visual-code-viewer"')
    assert 'class="aag-code-hl aag-code-barrier"' in page
    assert "cuda.syncthreads(): every thread of the block waits" in page   # legend and hover
    assert "registers per thread" in page
    assert "_ZN" not in page.split("compiler report")[0]    # names are readable, not mangled
    if tools.get("nvdisasm"):
        sass = views["tiled"].sass
        assert "BAR.SYNC" in sass and "LDS" in sass
        assert "SASS (the machine code" in page


def test_big_local_array_shows_local_memory(views, tools):
    view = views["big_local"]
    assert view.error is None
    assert "ld.local" in view.ptx and "st.local" in view.ptx
    assert view.resources.local_total >= 4096      # ptxas puts local arrays in the stack frame
    assert view.counts().get("local", 0) >= 2
    assert "4,096 B local memory per thread (a local array" in view.summary()
    assert "color:#b00020" in view._repr_html_().split("</div>")[0]    # the summary is a warning
    if view.sass:
        assert "LDL" in view.sass and "STL" in view.sass


def test_shuffle_kernel_shows_shfl_sync(views, tools):
    view = views["warp_sum"]
    assert view.error is None
    assert "shfl.sync" in view.ptx
    assert view.counts()["shuffle"] >= 1 and view.counts()["atomic"] >= 1
    assert "shuffle" in view.by_source_line()[line_of(warp_sum, "shfl_down_sync")]
    if view.sass:
        assert "SHFL" in view.sass


def test_saxpy_from_a_signature_string(views, tools):
    view = views["saxpy"]
    assert view.error is None and view.signature == SIG_SAXPY
    assert "ld.global" in view.ptx and "st.global" in view.ptx and "fma.rn.f32" in view.ptx
    assert view.resources.shared_bytes == 0 and "shared_load" not in view.counts()
    assert view.summary().startswith("saxpy compiled for sm_90 by CUDA ")
    text = repr(view)
    assert "registers per thread" in text and "global-memory load" in text


def test_device_functions_are_carried_and_float64_is_noted(views):
    view = views["calls_device"]
    assert view.error is None
    lines = {n["line"]: n for n in view.notes}
    assert lines[line_of(calls_device, "acc += squared")]["kind"] == "float64"
    if view.ptx:                                  # and the float64 instructions are highlighted
        assert "double" in view.by_source_line()[line_of(calls_device, "acc += squared")]
        assert "add.f64" in view.ptx or "add.rn.f64" in view.ptx
    assert "double" not in views["saxpy"].counts() and "fma" in views["saxpy"].counts() \
        or not views["saxpy"].ptx


def test_a_float_stored_into_an_int_array_is_noted(views):
    view = views["truncates"]
    note = next(n for n in view.notes if n["kind"] == "float_into_int")
    assert note["line"] == line_of(truncates, "out[i] = x[i]")
    assert "into `out`, an array of int32" in note["text"] and "fraction is cut off" in note["text"]
    assert "⚠" in view._repr_html_()


def test_missing_toolkit_says_exactly_what_to_install(monkeypatch):
    """Without the wheels the viewer still type-checks the kernel, and says what to install."""
    monkeypatch.setattr(code, "find_toolkit",
                        lambda: {"nvvm": None, "nvrtc": None, "nvJitLink": None, "nvdisasm": None})
    view = code.show_code(saxpy, np.float32(2), *[np.zeros(8, np.float32)] * 3)
    assert view.ptx == "" and view.sass == "" and view.error is None
    message = view.install_message()
    assert "AAG_EXTRAS=cuda13 ./aag lab" in message
    assert "pip install 'numba-cuda[cu13]>=0.30,<0.31' 'cuda-toolkit[nvdisasm]==13.*'" in message
    assert "190 MB" in message
    assert "NVIDIA ships no CUDA toolkit for macOS" in view.install_message(platform="darwin")
    page = view._repr_html_()
    assert 'class="aag-visual aag-visual-code-viewer"' in page and "aag-code-install" in page
    assert "AAG_EXTRAS=cuda13" in repr(view)


def test_missing_nvdisasm_keeps_ptx_and_resources(monkeypatch, tools):
    found = dict(tools, nvdisasm=None)
    monkeypatch.setattr(code, "find_toolkit", lambda: found)
    view = code.show_code(saxpy, SIG_SAXPY)
    assert view.ptx and not view.sass
    assert view.resources.registers                      # nvJitLink still reports them
    assert "nvidia-cuda-nvdisasm" in view.install_message()


def test_show_code_needs_arguments_or_a_signature():
    with pytest.raises(TypeError, match="example arguments"):
        code.show_code(saxpy)
    with pytest.raises(TypeError, match="device function"):
        code.show_code(squared, "float32")


def test_argument_types_match_a_launch():
    assert str(code.arg_type(cuda.to_device(np.zeros((3, 4), np.float32)))) == \
        "array(float32, 2d, C)"
    assert str(code.arg_type(np.float32(1))) == "float32"
    assert str(code.arg_type(np.zeros(5, np.int32)[::2])) == "array(int32, 1d, A)"


def test_classify_and_demangle():
    assert code.classify_ptx("\tld.shared.f32 \t%f1, [%rd1];") == "shared_load"
    assert code.classify_ptx("\t@%p1 bar.sync \t0;") == "barrier"
    assert code.classify_ptx("\tshfl.sync.down.b32 \t%r1|%p1, %r2, 16, 31, -1;") == "shuffle"
    assert code.classify_ptx("\tst.local.f32 \t[%rd2], %f1;") == "local"
    assert code.classify_ptx("\t// ld.shared in a comment") is None
    assert code.classify_ptx("\tadd.rn.f64 \t%fd2, %fd1, 0d3FE0000000000000;") == "double"
    assert code.classify_ptx("\tfma.rn.f32 \t%f4, %f2, %f1, %f3;") == "fma"
    assert code.classify_sass("        /*0100*/                   DADD R4, R2, 0.5 ;") == "double"
    assert code.classify_sass("        /*0110*/                   F2F.F64.F32 R2, R0 ;") == "double"
    assert code.classify_ptx(".visible .shared .align 4 .b8 smem[1024];") is None
    assert code.classify_sass("        /*0080*/                   LDS R3, [R2] ;") == "shared_load"
    assert code.classify_sass("        /*0090*/              @!P0 BAR.SYNC.DEFER_BLOCKING 0x0 ;") \
        == "barrier"
    assert code.classify_sass("        /*00a0*/                   LDC R1, c[0x0][0x28] ;") is None
    mangled = ("_ZN8__main__5saxpyB2v1B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOk"
               "EJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAEf5ArrayIfLi1E1C7mutable7alignedE")
    assert code.demangle(mangled) == "saxpy"
    assert code._readable(f"ld.param.u64 %rd1, [{mangled}_param_3];") == \
        "ld.param.u64 %rd1, [saxpy_param_3];"


def test_parse_resources():
    log = ("ptxas info    : Function properties for K\n"
           "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 255 registers, used 1 barriers\n"
           "info    : used 255 registers, used 1 barriers, 16 stack, 4096 bytes smem, "
           "744 bytes cmem[0], 0 bytes lmem\n")
    r = code.parse_resources(log)
    assert (r.registers, r.shared_bytes, r.stack_bytes, r.local_bytes, r.spill_stores,
            r.spill_loads, r.barriers) == (255, 4096, 16, 0, 8, 12, 1)
    assert r.local_total == 16
    view = code.KernelCode(name="K", cc=(9, 0), ptx="x", resources=r)
    assert "16 B local memory per thread (8 B spill stores, 12 B spill loads)" in view.summary()


def test_pictures_are_not_drawn_while_the_notebook_is_graded(monkeypatch, capsys):
    """The compiled-code viewer and the access picture earn no points: while the grader runs a
    notebook (AAG_GRADING=judge) they print one line and return None instead of compiling or
    recording (seconds per submission); outside grading they draw."""
    from autograder.learner.visual.access import access_picture
    args = (np.float32(2), *[np.zeros(8, np.float32)] * 3)
    monkeypatch.setenv("AAG_GRADING", "judge")
    assert code.show_code(saxpy, *args) is None
    assert access_picture(saxpy, 1, 8, *args) is None
    said = capsys.readouterr().out
    assert "PTX and SASS: not drawn while the notebook is graded" in said
    assert "memory accesses: not drawn while the notebook is graded" in said
    monkeypatch.delenv("AAG_GRADING")
    assert isinstance(code.show_code(saxpy, *args), code.KernelCode)


@cuda.jit
def reshapes(x, out):
    flat = x.reshape(x.size)                        # Numba's reshape helper, linked on a GPU
    i = cuda.grid(1)
    if i < out.size:
        out[i] = flat[i]


def test_a_kernel_that_calls_numbas_own_helpers_says_why_it_has_no_sass(tools):
    view = code.compile_kernels([(reshapes, (), "float32[:, ::1], float32[::1]")], cc=(9, 0))[0]
    assert view.ptx and not view.sass and view.resources.registers
    said = " ".join(n["text"] for n in view.notes if n["kind"] == "tool")
    assert "numba_attempt_nocopy_reshape" in said and "linking failed" not in said


# A loop whose two loads are used at once, and the same loop pipelined: each pass loads into one
# register set and adds the other, which the previous pass loaded.
_LOADS_USED_AT_ONCE = """
.L_x_3:
        /*0100*/                   LDG.E.64 R4, desc[UR4][R2.64] ;
        /*0110*/                   FADD R9, R4, R5 ;
        /*0120*/                   LDG.E R6, desc[UR4][R2.64+0x8] ;
        /*0130*/               @P0 STG.E desc[UR4][R10.64], R6 ;
        /*0140*/                   IADD3 R2, P1, R2, 0x10, RZ ;
        /*0150*/               @!P2 BRA `(.L_x_3) ;
"""
_PIPELINED = """
        /*0000*/                   LDG.E.64 R4, desc[UR4][R2.64] ;
.L_x_7:
        /*0100*/                   LDG.E.64 R6, desc[UR4][R2.64+0x8] ;
        /*0110*/                   FADD R9, R4, R5 ;
        /*0120*/                   LDG.E.64 R4, desc[UR4][R2.64+0x10] ;
        /*0130*/                   FADD R9, R6, R9 ;
        /*0140*/                   LDG.E.128 R12, desc[UR4][R2.64+0x20] ;
        /*0150*/                   BRA `(.L_x_7) ;
"""


def test_loads_in_flight_counts_the_loads_outstanding_at_each_wait():
    """A wait is an instruction that reads a register a pending load writes (both of a 64-bit
    load's, all four of a 128-bit one's; a store reads its value, predicated or not); loads
    still pending at the branch back stay in flight across it. Without a loop, nothing."""
    at_once = code.loads_in_flight(_LOADS_USED_AT_ONCE)
    assert (at_once.loads, at_once.waits, at_once.across_back_edge) == (2, [1, 1], 0)
    assert at_once.instructions == 6
    piped = code.loads_in_flight(_PIPELINED)        # R4 was loaded before the loop, not in it
    assert (piped.loads, piped.waits, piped.across_back_edge) == (3, [2], 2)
    assert code.loads_in_flight(_PIPELINED.replace(".L_x_7:", "")).loads == 0
