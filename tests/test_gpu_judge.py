"""scripts/gpu-judge.py's ``solutions`` part judges each chapter's own solution on the GPU; the
code it sends must be what a learner who ran the chapter has defined. Checked here without a GPU:
every global a solution kernel reads is defined by the assembled code."""

from __future__ import annotations

import builtins
import contextlib
import dis
import importlib.util
import io
from pathlib import Path

import pytest

import bank

_SPEC = importlib.util.spec_from_file_location(
    "gpu_judge", Path(__file__).parents[1] / "scripts" / "gpu-judge.py")
gpu_judge = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu_judge)

TIMED = [e for e, s in bank.EXERCISES.items() if s["speed_id"]]


def _undefined_globals(code: str) -> set[tuple[str, str]]:
    """(kernel, name) for each global a kernel defined by ``code`` reads and ``code`` leaves
    undefined, ``code`` run as a notebook's cells would be."""
    ns: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<solution>", "exec"), ns)
    return {(name, ins.argval) for name, value in ns.items()
            if (fn := getattr(value, "py_func", None)) is not None
            for ins in dis.get_instructions(fn)
            if ins.opname == "LOAD_GLOBAL" and ins.argval not in ns
            and not hasattr(builtins, ins.argval)}


@pytest.mark.parametrize("exercise", TIMED)
def test_the_assembled_solution_defines_every_global_its_kernels_read(exercise):
    if "triton" in exercise:
        pytest.importorskip("triton", reason="Triton's chapters define their kernels with Triton")
    assert _undefined_globals(gpu_judge.solution_code(exercise)) == set()


def test_of_the_other_cells_only_what_the_solutions_read_is_kept():
    cells = [(None, "rng = np.random.default_rng(1)\nA = rng.standard_normal(3)\nBASE = 4"),
             (None, "BASE = 8\nPAD = BASE + 1\nprint(PAD)\ndef helper(v):\n    x = v\n"
                    "    return x + OFFSET"),
             ("@cuda.jit\ndef k(x, out):\n    ### BEGIN SOLUTION\n    out[0] = x[0] + PAD\n"
              "    ### END SOLUTION", "stub"),
             (None, "OFFSET = 2\nx = 5\nfig = draw(x)")]
    # the kernel reads PAD (from BASE's last value before it), not x (its parameter), A or fig;
    # a solution cell stays as written, comments and all
    assert gpu_judge._as_run(cells) == ["BASE = 8", "PAD = BASE + 1", cells[2][0]]
    cells[2] = ("def k2(v):\n    return helper(v)", "stub")
    # helper reads OFFSET when called, after the cell that defines it
    assert gpu_judge._as_run(cells) == ["def helper(v):\n    x = v\n    return x + OFFSET",
                                        cells[2][0], "OFFSET = 2"]


def test_chapter_11s_status_codes_reach_its_single_pass_scan():
    code = gpu_judge.solution_code("scan_single_pass")
    assert "NOT_READY, AGGREGATE, PREFIX = " in code
    without = code.replace("NOT_READY, AGGREGATE, PREFIX = ", "_unused = ")
    assert "PREFIX" in {name for _, name in _undefined_globals(without)}
