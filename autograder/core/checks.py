"""Comparing a submission's outputs with the float64 spec, and saying what went wrong.

Everything here is plain data in, verdict out: it never calls learner code, so a judge can run it
in a process that never ran the submission.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

# fp32 unit roundoff: a correctly rounded fp32 operation is off by at most U32 * |exact result|.
U32 = 2.0 ** -24
# The smallest positive normal fp32: below it, relative bounds do not hold, so allow this much.
TINY32 = float(np.finfo(np.float32).tiny)
GUARD = 64  # elements of canary after each output, to catch writes past its end


class CheckFailed(AssertionError):
    """A check's verdict, raised so that nbgrader marks the test cell as failed."""

    def __init__(self, verdict: "Verdict"):
        super().__init__(str(verdict))
        self.verdict = verdict


def gamma(k: int, u: float = U32) -> float:
    """Higham's gamma_k = k u / (1 - k u): the bound on k stacked roundings."""
    return k * u / (1 - k * u)


def poison_value(dtype) -> float | int:
    """What an output is filled with before each run: NaN, or the most negative integer."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max
    raise TypeError(f"no poison value for {dtype}")


def is_poison(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind == "f":
        return np.isnan(values)
    return values == poison_value(values.dtype)


@dataclass
class Outcome:
    """What running a submission on one case produced (no judgement yet)."""

    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    guard_intact: dict[str, bool] = field(default_factory=dict)
    error: str | None = None        # exception type and message, if the run raised
    error_kind: str | None = None   # "exception", "hang", "crash", "cuda"
    printed: str = ""               # what the submission printed (replayed to the learner)
    seconds: float = 0.0


@dataclass
class Verdict:
    problem: str
    passed: bool
    case: str = ""                  # e.g. "n = 1025, 128 threads per block"
    message: str = ""               # what happened, first failure first
    hint: str = ""                  # what that usually means
    cases_run: int = 0
    index: int | None = None        # flat index of the first wrong element, if any

    def __str__(self) -> str:
        if self.passed:
            return f"✓ {self.problem}: passed {self.message}".rstrip()
        text = f"✗ {self.problem} failed on {self.case}:\n  {self.message}"
        if self.hint:
            text += f"\n  Hint: {self.hint}"
        return text


def fmt(x) -> str:
    """A number as verdicts print it: 9 significant digits for floats, as is otherwise."""
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.9g}"
    return str(x)


def describe_exception(error: str, kind: str | None) -> str:
    """A hint for a run that raised, hung or crashed."""
    m = re.search(r"tid=\[(\d+), (\d+), (\d+)\] ctaid=\[(\d+), (\d+), (\d+)\]: index (-?\d+) is out of "
                  r"bounds for axis (\d+) with size (\d+)", error)
    if m and (m.group(2) != "0" or m.group(5) != "0" or m.group(8) != "0"):
        # A 2-D grid (a thread or block with y > 0) or a 2-D array (an axis other than 0).
        tx, ty, bx, by, idx, axis, size = (m.group(k) for k in (1, 2, 4, 5, 7, 8, 9))
        return (f"thread (x={tx}, y={ty}) of block (x={bx}, y={by}) used index {idx} on axis "
                f"{axis}, which has {size} elements. Guard both coordinates (`if row < rows and "
                f"col < cols:`), and check that each index runs over its own dimension: the "
                f"column comes from x, the row from y, and a loop bound from the matching shape.")
    if m:
        t, b, idx, size = m.group(1), m.group(4), m.group(7), m.group(9)
        from autograder.core.explain import SPARE_THREADS_TOGETHER
        return (f"thread {t} of block {b} used index {idx} on an array of {size} elements. The grid "
                f"has more threads than elements: guard the body with `if i < n:` (n = the "
                f"length). {SPARE_THREADS_TOGETHER}")
    if "shared-memory race" in error:
        return ("two threads used the same shared-memory element between the same two barriers. "
                "Put cuda.syncthreads() after the threads write a tile and before any thread reads "
                "it, and again after the reads, before the tile is overwritten.")
    if "BarrierDivergence" in error:
        return ("every thread of a block must reach the same cuda.syncthreads(), the same number "
                "of times: move the barrier out of the `if` (or the loop whose length differs per "
                "thread), and let threads with nothing to do skip the work but not the barrier.")
    if kind == "hang":
        return ("the run never finished: a loop whose index never reaches its bound (a grid-stride "
                "loop must add the stride each pass) or threads waiting on each other.")
    if kind == "cuda" and "ILLEGAL_ADDRESS" in error.upper():
        return ("the kernel touched memory outside an array (a missing bounds check?). The GPU's "
                "context is now unusable: restart the Python kernel before running more GPU code.")
    if "NotImplementedError" in error:
        return "replace `raise NotImplementedError()` in the exercise cell with your code."
    from autograder.core.explain import explain_text
    plain = explain_text(error)
    if plain:
        return plain
    if "TypingError" in error or "NumbaError" in error:
        return "Numba could not compile the kernel: read the first lines of the error above."
    if kind == "crash":
        return "the process running your code died; a kernel that exits or corrupts memory?"
    return "your code raised an exception: the message above says where."


def compare(problem: str, case: str, expected: dict[str, np.ndarray], outcome: Outcome,
            tolerance: dict[str, np.ndarray], dtypes: dict[str, np.dtype],
            launch: tuple | None = None) -> Verdict:
    """Judge one case: exact dtype and shape, every element within its bound. A NaN matches only
    where the spec itself is NaN (an input that holds a NaN); anywhere else it is wrong.
    ``launch``: the case's (blocks, threads), which some diagnoses need."""
    if outcome.error:
        return Verdict(problem, False, case, outcome.error.strip().splitlines()[-1][:500],
                       describe_exception(outcome.error, outcome.error_kind))
    for name, exp in expected.items():
        got = outcome.outputs.get(name)
        if got is None:
            return Verdict(problem, False, case, f"no output `{name}` came back", "")
        got = np.asarray(got)
        if got.dtype != dtypes[name] or got.shape != exp.shape:
            return Verdict(problem, False, case,
                           f"`{name}` is {got.dtype}{list(got.shape)}, expected "
                           f"{np.dtype(dtypes[name])}{list(exp.shape)}", "")
        if not outcome.guard_intact.get(name, True):
            return Verdict(problem, False, case,
                           f"something was written past the end of `{name}` "
                           f"({exp.size} elements)",
                           "a thread whose index is >= n still stored a value: guard the store "
                           "with `if i < n:`.")
        verdict = _compare_array(problem, case, name, exp, got, tolerance[name], launch)
        if verdict is not None:
            return verdict
    return Verdict(problem, True, case)


def _compare_array(problem, case, name, exp, got, tol, launch=None) -> Verdict | None:
    flat_exp, flat_got = exp.reshape(-1), got.reshape(-1)
    tol = np.broadcast_to(tol, exp.shape).reshape(-1)
    diff = np.abs(flat_got.astype(np.float64) - flat_exp)
    bad = ~(diff <= tol)  # NaN compares False, so NaN is never within tolerance...
    if flat_got.dtype.kind == "f":
        bad &= ~(np.isnan(flat_exp) & np.isnan(flat_got))   # ...unless the spec is NaN there
    if not bad.any():
        return None
    n = flat_exp.size
    unwritten = is_poison(flat_got) & ~is_poison_expected(flat_exp, flat_got.dtype)
    nbad = int(bad.sum())
    first = int(np.argmax(bad))
    where = f"`{name}`[{_index(first, exp.shape)}]"
    if unwritten.any():
        k = int(unwritten.sum())
        first_u = int(np.argmax(unwritten))
        if k == n:
            return Verdict(problem, False, case, f"nothing was written to `{name}`",
                           "was the kernel launched (`kernel[blocks, threads](...)`), and does it "
                           "store into the output array?")
        if len(exp.shape) == 2:
            return Verdict(problem, False, case,
                           f"{k} of {n} elements of `{name}` (shape {exp.shape[0]} × "
                           f"{exp.shape[1]}) were never written; the first is "
                           f"`{name}`[{_index(first_u, exp.shape)}]", HINT_2D_UNWRITTEN)
        blocks, threads = launch if launch else (0, 0)
        if (unwritten[first_u:].all() and isinstance(blocks, int) and isinstance(threads, int)
                and blocks > 1 and first_u == threads):
            return Verdict(problem, False, case,
                           f"only the first {first_u} of {n} elements of `{name}` were written: "
                           f"one block's worth, though {blocks} blocks were launched",
                           "every block wrote the same elements: the index has no block offset. "
                           "A thread's element is cuda.blockIdx.x * cuda.blockDim.x + "
                           "cuda.threadIdx.x (or cuda.grid(1)), not cuda.threadIdx.x alone.")
        if unwritten[first_u:].all():
            return Verdict(problem, False, case,
                           f"the last {k} of {n} elements of `{name}` were never written "
                           f"(first: index {first_u})",
                           "either the grid has fewer threads than elements (blocks = "
                           "ceil(n / threads) = (n + threads - 1) // threads, or loop with a grid "
                           "stride), or the bounds check stops short (`i < n`, not `i < n - 1`).")
        return Verdict(problem, False, case,
                       f"{k} of {n} elements of `{name}` were never written; the first is "
                       f"`{name}`[{_index(first_u, exp.shape)}]",
                       "check how each thread computes its index: "
                       "cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x (or cuda.grid(1)).")
    message = (f"{nbad} of {n} elements are wrong; the first is {where}: expected "
               f"{fmt(flat_exp[first])}, got {fmt(flat_got[first])} (allowed error "
               f"{tol[first]:.3g})")
    return Verdict(problem, False, case, message, _value_hint(flat_exp, flat_got, bad, first, tol),
                   index=first)


GENERIC_VALUE_HINT = "compare your formula with the spec in the exercise text for this element."
HINT_2D_UNWRITTEN = (
    "on a 2-D grid, x runs along a row: `col, row = cuda.grid(2)` (x first), so the column comes "
    "from x and the row from y. Check that the bounds test compares the row with the number of "
    "rows and the column with the number of columns, and that you index `out[row, col]`. (Swapped "
    "x and y go unnoticed on a square image and leave elements unwritten on any other.)")


def is_poison_expected(exp: np.ndarray, dtype) -> np.ndarray:
    """Where the spec itself equals the poison value (so an untouched element is right)."""
    if np.dtype(dtype).kind == "f":
        return np.isnan(exp)
    return exp == poison_value(dtype)


def _index(flat: int, shape) -> str:
    return ", ".join(str(i) for i in np.unravel_index(flat, shape)) if len(shape) > 1 else str(flat)


def _value_hint(exp, got, bad, first, tol) -> str:
    n = exp.size
    g = got.astype(np.float64)
    for shift in (1, -1):
        lo, hi = max(0, shift), n + min(0, shift)
        if hi - lo > 1 and np.all(np.abs(g[lo:hi] - exp[lo - shift:hi - shift])
                                  <= tol[lo - shift:hi - shift]):
            return ("each value sits one place away from where it belongs: an index that is off "
                    "by one?")
    err = np.abs(g[bad] - exp[bad])
    scale = np.maximum(np.abs(exp[bad]), TINY32)
    if np.all(err <= 2.0 ** -10 * scale * 4):
        return ("the values are close but less precise than float32 arithmetic allows: is part of "
                "the computation done in a lower precision (float16)?")
    return GENERIC_VALUE_HINT
