"""Chapter 14's graded exercises: sparse matrices with real structure (banded, uniform random row
lengths, power-law row lengths), the conversions between formats, the float64 spec with the
error bound of a float32 sum of each row's terms, how the checks launch a learner's kernel, the
CPU baselines, and verdicts that name the usual bugs of each format."""

from __future__ import annotations

import re

import numpy as np

from autograder.core.checks import TINY32, U32, Verdict
from autograder.machine import device
from autograder.grading.problem import (PROVENANCE_HINT, Baseline, Case, Problem, SpeedBar,
                                       Sizes)
from autograder.problems.ch09.references import zero
from autograder.problems.ch10.specs import (ACTIVEMASK_HINT, FULL_MASK, WARP_POISON_HINT,
                                            at_warp_size, device_warp_size, warp_poisoned)
from autograder.problems.ch14.references import (csr_vector_kernel, cupy_csr_spmv, reference_coo,
                                                 reference_csr, reference_ell, reference_hybrid,
                                                 reference_jds)
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.inputs import cores, random_floats

INDEX = np.int32
VALUE = np.float32

KINDS = ("banded", "uniform", "power_law")
KIND_LABELS = {"banded": "banded", "uniform": "uniform random row lengths",
               "power_law": "power-law row lengths"}
BAND = 2                  # a banded row has up to 2·BAND + 1 nonzeros around its diagonal
UNIFORM_MAX = 12          # uniform row lengths 0 .. 12 (mean 6)


def kind_of(rows: int) -> str:
    """The matrix a case of ``rows`` rows gets: fixed by the size, so a verdict can name it."""
    return KINDS[int(rows) % len(KINDS)]


def cols_of(rows: int) -> int:
    """Columns of a case's matrix: not square (a kernel that takes x.size for the rows fails)."""
    return int(rows) + int(rows) // 3 + 5


def longest_row(rows: int, cols: int) -> int:
    """The most nonzeros a row may have: the power-law matrix's long row. Far longer than the
    others in small cases; bounded at large sizes so that the padded ELL arrays fit a GPU."""
    return int(min(cols, 40 + int(rows) // 4, max(12, (1 << 26) // max(int(rows), 1))))


# ---- matrices with real structure ---------------------------------------------------------------

def _distinct_columns(rng, lengths: np.ndarray, cols: int) -> np.ndarray:
    """Column indices, ``lengths[i]`` distinct ones for row i (in no particular order), without a
    loop over rows: each row starts at a random column and steps by random gaps of 1 to
    ``cols // length``, modulo ``cols``; the steps add up to at most ``cols``, so no column
    comes back."""
    nnz = int(lengths.sum())
    if nnz == 0:
        return np.zeros(0, INDEX)
    rowid = np.repeat(np.arange(lengths.size), lengths)
    gmax = np.maximum(1, cols // np.maximum(lengths, 1))[rowid]
    gaps = 1 + (rng.random(nnz) * gmax).astype(np.int64)
    total = np.cumsum(gaps)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    before = np.concatenate(([0], total))[starts]              # the sum of earlier rows' gaps
    within = total - np.repeat(before, lengths)
    first = rng.integers(0, cols, lengths.size)
    return ((first[rowid] + within) % cols).astype(INDEX)


def make_matrix(rng: np.random.Generator, rows: int, kind: str | None = None,
                cols: int | None = None) -> dict:
    """A sparse float32 matrix in CSR: ``row_ptr`` (rows + 1, int32), ``col`` and ``val`` (nnz),
    with ``cols`` columns. Kinds: ``banded`` (up to 5 nonzeros around the diagonal, some
    dropped), ``uniform`` (row lengths 0 .. 12, mean 6), ``power_law`` (most rows short, many
    empty, a few long, one as long as :func:`longest_row` allows). Every kind but the banded one
    has empty rows. No column appears twice in a row; within a row, columns come in no
    particular order."""
    rows = int(rows)
    kind = kind or kind_of(rows)
    cols = cols_of(rows) if cols is None else int(cols)
    if kind == "banded":
        centre = (np.arange(rows, dtype=np.int64) * cols) // max(rows, 1)
        offsets = np.arange(-BAND, BAND + 1)
        c = centre[:, None] + offsets[None, :]
        keep = (c >= 0) & (c < cols) & ((rng.random(c.shape) < 0.8) | (offsets == 0))
        lengths = keep.sum(axis=1)
        col = c[keep].astype(INDEX)
    else:
        cap = longest_row(rows, cols)
        if kind == "uniform":
            lengths = rng.integers(0, UNIFORM_MAX + 1, rows)
        else:
            lengths = np.floor(3.0 * rng.pareto(1.5, rows)).astype(np.int64)
            if rows > 1:
                lengths[rng.integers(0, rows)] = cap          # one row far longer than the rest
        if rows > 2:
            lengths[rng.integers(0, rows)] = 0                 # at least one empty row
        lengths = np.minimum(lengths, cap).astype(np.int64)
        col = _distinct_columns(rng, lengths, cols)
    row_ptr = np.zeros(rows + 1, np.int64)
    np.cumsum(lengths, out=row_ptr[1:])
    val = random_floats(rng, int(row_ptr[-1]))
    return {"row_ptr": row_ptr.astype(INDEX), "col": col, "val": val, "cols": cols}


# ---- the formats ---------------------------------------------------------------------------------

def row_of_each(row_ptr) -> np.ndarray:
    """The row of every nonzero of a CSR matrix (COO's ``row`` array, in CSR order)."""
    row_ptr = np.asarray(row_ptr, np.int64)
    return np.repeat(np.arange(row_ptr.size - 1), np.diff(row_ptr)).astype(INDEX)


def csr_to_coo(row_ptr, col, val, rng: np.random.Generator | None = None):
    """(row, col, val) of the same nonzeros; in a random order when ``rng`` is given (COO keeps
    no order: a kernel must not rely on one)."""
    row = row_of_each(row_ptr)
    col, val = np.asarray(col, INDEX), np.asarray(val, VALUE)
    if rng is not None:
        order = rng.permutation(row.size)
        row, col, val = row[order], col[order], val[order]
    return np.ascontiguousarray(row), np.ascontiguousarray(col), np.ascontiguousarray(val)


def csr_to_ell(row_ptr, col, val):
    """ELL, column-major, of a CSR matrix: ``(ell_col, ell_val, nnz_per_row, width)`` where
    ``width`` is the longest row and slot ``t`` of row ``i`` is at ``t · rows + i``. A row shorter
    than ``width`` is padded with column −1 and value 0."""
    row_ptr = np.asarray(row_ptr, np.int64)
    rows = row_ptr.size - 1
    lengths = np.diff(row_ptr)
    width = int(lengths.max(initial=0))
    ell_col = np.full(width * rows, -1, INDEX)
    ell_val = np.zeros(width * rows, VALUE)
    row = row_of_each(row_ptr).astype(np.int64)
    slot = np.arange(row.size) - row_ptr[row]                 # the nonzero's place in its row
    ell_col[slot * rows + row] = col
    ell_val[slot * rows + row] = val
    return ell_col, ell_val, lengths.astype(INDEX), width


def csr_to_jds(row_ptr, col, val):
    """JDS (jagged diagonal storage) of a CSR matrix: ``(perm, t_ptr, jds_col, jds_val)``. The
    rows sorted by length, longest first (stable: equal lengths keep their order); ``perm[i]`` is
    the matrix row of sorted row ``i``. Section ``t`` holds slot ``t`` of every sorted row that has
    one (rows ``0 .. t_ptr[t + 1] − t_ptr[t] − 1``, since they are sorted), from ``t_ptr[t]`` on:
    slot ``t`` of sorted row ``i`` is at ``t_ptr[t] + i``. No padding."""
    row_ptr = np.asarray(row_ptr, np.int64)
    rows = row_ptr.size - 1
    lengths = np.diff(row_ptr)
    perm = np.argsort(-lengths, kind="stable")
    width = int(lengths.max(initial=0))
    # rows with a slot t: those longer than t
    rows_with = rows - np.cumsum(np.bincount(lengths, minlength=width + 1))[:width]
    t_ptr = np.zeros(width + 1, np.int64)
    np.cumsum(rows_with, out=t_ptr[1:])
    sorted_pos = np.empty(rows, np.int64)
    sorted_pos[perm] = np.arange(rows)
    row = row_of_each(row_ptr).astype(np.int64)
    slot = np.arange(row.size) - row_ptr[row]
    where = t_ptr[slot] + sorted_pos[row]
    jds_col = np.empty(row.size, INDEX)
    jds_val = np.empty(row.size, VALUE)
    jds_col[where] = col
    jds_val[where] = val
    return perm.astype(INDEX), t_ptr.astype(INDEX), jds_col, jds_val


def jds_rows(perm, t_ptr) -> np.ndarray:
    """The matrix row of every entry of a JDS matrix, in storage order."""
    t_ptr = np.asarray(t_ptr, np.int64)
    e = np.arange(int(t_ptr[-1]))
    section = np.searchsorted(t_ptr, e, side="right") - 1
    return np.asarray(perm, np.int64)[e - t_ptr[section]]


def storage_bytes(row_ptr) -> dict:
    """Bytes each format stores for a matrix with these row lengths (4-byte indices and values):
    COO three arrays of nnz; CSR two of nnz and row_ptr; ELL two of rows × the longest row, and
    the row lengths; JDS two of nnz, the permutation of the rows and a pointer per slot."""
    row_ptr = np.asarray(row_ptr, np.int64)
    rows = row_ptr.size - 1
    nnz = int(row_ptr[-1])
    width = int(np.diff(row_ptr).max(initial=0))
    return {"rows": rows, "nnz": nnz, "width": width, "coo": 12 * nnz,
            "csr": 8 * nnz + 4 * (rows + 1), "ell": 8 * rows * width + 4 * rows,
            "jds": 8 * nnz + 4 * rows + 4 * (width + 1)}


# ---- the spec: float64, and the error bound of each row's float32 sum ---------------------------

def spmv_host(row, col, val, x, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """y = A·x in float64 from the nonzeros (any order), with each row's Σ|a_ij · x_j| and its
    count of nonzeros."""
    row = np.asarray(row, np.int64)
    terms = np.asarray(val, np.float64) * np.asarray(x, np.float64)[np.asarray(col, np.int64)]
    y = np.bincount(row, weights=terms, minlength=rows)[:rows]
    mag = np.bincount(row, weights=np.abs(terms), minlength=rows)[:rows]
    count = np.bincount(row, minlength=rows)[:rows]
    return y, mag, count


def row_tolerance(mag: np.ndarray, count: np.ndarray) -> np.ndarray:
    """|error| ≤ γ_k · Σ|a_ij · x_j| for a float32 sum of a row's k products, in any order (k − 1
    additions and a rounded product each), plus two roundings of margin and the smallest normal
    float32; the float64 reference's own error is far below it."""
    k = np.asarray(count, np.float64) + 2
    return k * U32 / (1 - k * U32) * mag + TINY32


def _used_columns(col, cols: int) -> np.ndarray:
    used = np.zeros(cols, bool)
    c = np.asarray(col, np.int64)
    used[c[c >= 0]] = True
    return used


def _label(rows) -> str:
    rows = int(rows)
    return f"{rows} row{'s' * (rows != 1)} × {cols_of(rows)} columns ({KIND_LABELS[kind_of(rows)]})"


def _cdiv(a, b) -> int:
    return max(1, -(-int(a) // int(b)))


# ---- verdicts ------------------------------------------------------------------------------------

ATOMIC_HINT = (
    "two threads added into the same element of y with a plain `+=`: each reads y[r], adds its "
    "product and writes it back, so on a GPU one of the two additions is lost. Every nonzero of a "
    "row is a different thread in COO: add with cuda.atomic.add(y, row[k], val[k] * x[col[k]]).")
GUARD_HINT = (
    "a thread past the end read or wrote outside an array: the grid has more threads than "
    "{what} (the last block is partial), so guard with `if {index} < {size}:` before touching "
    "anything.")

HOST_INDEX_HINT = (
    "an index went out of bounds in host code, not in a thread of a kernel: during a check the "
    "exercise's arrays are meant for your kernel only, and read on the host they do not hold the "
    "matrix. Compute y in the kernel, from the device arrays.")


def _ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, k): every k in range(starts[r], stops[r]) for every r, with r as its owner (empty
    ranges give nothing), without a loop over the ranges."""
    lengths = np.maximum(stops - starts, 0)
    owner = np.repeat(np.arange(starts.size), lengths)
    first = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    k = np.repeat(starts, lengths) + (np.arange(int(lengths.sum())) - np.repeat(first, lengths))
    return owner, k


def _sum_terms(owner, terms, rows) -> tuple[np.ndarray, np.ndarray]:
    y = np.bincount(owner, weights=terms, minlength=rows)[:rows]
    mag = np.bincount(owner, weights=np.abs(terms), minlength=rows)[:rows]
    count = np.bincount(owner, minlength=rows)[:rows]
    return y, row_tolerance(mag, count)


def _shifted_csr(row_ptr, col, val, x, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """y (and its tolerance) of a CSR loop over range(row_ptr[i] + lo, row_ptr[i + 1] + hi),
    entries past the arrays left out (what the usual off-by-ones compute)."""
    row_ptr = np.asarray(row_ptr, np.int64)
    nnz = np.asarray(val).size
    owner, k = _ranges(np.clip(row_ptr[:-1] + lo, 0, nnz), np.clip(row_ptr[1:] + hi, 0, nnz))
    terms = (np.asarray(val, np.float64)[k]
             * np.asarray(x, np.float64)[np.asarray(col, np.int64)[k]])
    return _sum_terms(owner, terms, row_ptr.size - 1)


def _row_major_ell(ell_col, ell_val, nnz_per_row, x) -> tuple[np.ndarray, np.ndarray]:
    """y (and its tolerance) of an ELL kernel that reads slot t of row i at i · width + t
    (row-major); a padding column −1 reads x[−1], as Python's indexing does."""
    lengths = np.asarray(nnz_per_row, np.int64)
    rows = lengths.size
    width = np.asarray(ell_col).size // max(rows, 1)
    starts = np.arange(rows, dtype=np.int64) * width
    owner, k = _ranges(starts, starts + lengths)
    terms = (np.asarray(ell_val, np.float64)[k]
             * np.asarray(x, np.float64)[np.asarray(ell_col, np.int64)[k]])
    return _sum_terms(owner, terms, rows)


def _sections_rows_long(perm, sorted_lengths, col, val, x) -> tuple[np.ndarray, np.ndarray]:
    """y (and its tolerance) of a JDS kernel that reads slot t of sorted row i at t · rows + i
    (ELL's layout), entries past the arrays left out."""
    rows = np.asarray(perm).size
    nnz = np.asarray(val).size
    sorted_row, t = _ranges(np.zeros(rows, np.int64), np.asarray(sorted_lengths, np.int64))
    k = t * rows + sorted_row
    inside = k < nnz
    terms = (np.asarray(val, np.float64)[k[inside]]
             * np.asarray(x, np.float64)[np.asarray(col, np.int64)[k[inside]]])
    return _sum_terms(np.asarray(perm, np.int64)[sorted_row[inside]], terms, rows)


class SpmvProblem(Problem):
    """An SpMV exercise: cases labelled with their matrix, the tolerance of each row, and
    verdicts that name the format's usual bug."""

    def __init__(self, *args, format: str, **kw):
        super().__init__(*args, **kw)
        self.format = format

    def cases(self, hidden: bool = False, seed=None):
        cases = super().cases(hidden, seed)
        for case in cases:
            nnz = int(np.asarray(case.inputs.get("val", ())).size)
            if self.format == "ell":
                nnz = int(np.asarray(case.inputs["nnz_per_row"]).sum())
            if self.format == "hybrid":
                nnz = int(np.asarray(case.inputs["ell_len"]).sum()) + int(
                    np.asarray(case.inputs["coo_val"]).size)
            case.label = f"{_label(case.size)}, {nnz} nonzeros"
            if self.format == "coo":                   # one thread per nonzero
                case.blocks = _cdiv(nnz, case.threads)
        return cases

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs=False)
        if verdict.passed:
            return verdict
        if outcome.error:
            provenance = getattr(outcome, "provenance", None) or {}
            if provenance.get("verdict") and provenance.get("before_values"):
                # The arrays went to the host (and came back as decoys, so the call failed):
                # where the values came from is the verdict, not the error they led to.
                return Verdict(self.name, False, case.describe(), provenance["verdict"],
                               PROVENANCE_HINT)
            error = outcome.error
            if "GlobalMemoryRace" in error or "global-memory race" in error:
                verdict.hint = ATOMIC_HINT
            elif "IndexError" in error or "out of bounds" in error:
                hint = self.index_hint(case, error)
                if hint:
                    verdict.hint = hint
            return verdict
        got = outcome.outputs.get("y")
        if got is not None:
            hint = self.diagnose(case, np.asarray(got, np.float64))
            if hint:
                verdict.hint = hint
        return verdict

    def index_hint(self, case, error: str) -> str:
        """What an index out of bounds most likely comes from, from the array's size."""
        if "tid=" not in error:
            return HOST_INDEX_HINT
        match = re.search(r"with size (\d+)", error)
        size = int(match.group(1)) if match else -1
        inputs = case.inputs
        rows, cols = int(case.size), int(np.asarray(inputs["x"]).size)
        if self.format == "coo":
            if size == int(np.asarray(inputs["val"]).size):
                return GUARD_HINT.format(what="nonzeros", index="k", size="val.size")
            if size in (rows, cols):
                return ("y has one element per row and x one per column (the matrices are not "
                        "square): add into y[row[k]] the product val[k] * x[col[k]].")
            return ""
        if size in (rows, rows + 1):
            return GUARD_HINT.format(what="rows", index="i", size="y.size")
        return ""

    def diagnose(self, case, got: np.ndarray) -> str:
        inputs = case.inputs
        expected, tol = self.reference_values(case)
        y, tol = expected["y"], tol["y"]
        if self.format == "coo":
            rows = int(inputs["rows"])
            counts = np.bincount(np.asarray(inputs["row"], np.int64), minlength=rows)[:rows]
        elif self.format == "csr":
            counts = np.diff(np.asarray(inputs["row_ptr"], np.int64))
        elif self.format == "jds":
            rows = np.asarray(inputs["perm"]).size
            counts = np.bincount(jds_rows(inputs["perm"], inputs["t_ptr"]), minlength=rows)
        elif self.format == "hybrid":
            rows = np.asarray(inputs["ell_len"]).size
            counts = np.asarray(inputs["ell_len"], np.int64) + np.bincount(
                np.asarray(inputs["coo_row"], np.int64), minlength=rows)[:rows]
        else:
            counts = np.asarray(inputs["nnz_per_row"], np.int64)
        poisoned = np.isnan(got)
        wrong = ~(np.abs(got - y) <= tol)
        if poisoned.any() and (counts[poisoned] == 0).all() and not (wrong & ~poisoned).any():
            return ("only the empty rows are wrong: they were never written. A row without "
                    "nonzeros still has y[i] = 0, and its thread must store it.")
        if self.format == "coo" and poisoned.all():
            return ("y was never written: add each product into y[row[k]] with cuda.atomic.add "
                    "(the check sets y to 0 before the launch).")
        if self.format == "csr":
            row_ptr, col, val, x = (inputs[k] for k in ("row_ptr", "col", "val", "x"))
            for (lo, hi), what in (((0, 1), "range(row_ptr[i], row_ptr[i + 1] + 1) takes the "
                                            "first nonzero of the next row too"),
                                   ((1, 1), "range(row_ptr[i] + 1, row_ptr[i + 1] + 1) is the "
                                            "row shifted by one nonzero"),
                                   ((0, -1), "range(row_ptr[i], row_ptr[i + 1] - 1) leaves out "
                                             "the row's last nonzero")):
                alt, alt_tol = _shifted_csr(row_ptr, col, val, x, lo, hi)
                if np.all(np.abs(got - alt) <= alt_tol):
                    return (f"each row's nonzeros are row_ptr[i] .. row_ptr[i + 1] − 1, that is "
                            f"range(row_ptr[i], row_ptr[i + 1]); {what}.")
        if self.format == "ell":
            alt, alt_tol = _row_major_ell(inputs["col"], inputs["val"], inputs["nnz_per_row"],
                                          inputs["x"])
            if np.all(np.abs(got - alt) <= alt_tol):
                return ("the slots were read row-major (i · width + t); the arrays are "
                        "column-major: slot t of row i is at t · rows + i, with rows = y.size.")
        if self.format == "hybrid":
            hint = _diagnose_hybrid(inputs, got)
            if hint:
                return hint
        if self.format == "jds":
            perm = np.asarray(inputs["perm"], np.int64)
            if np.all(np.abs(got - y[perm]) <= tol[perm]):
                return ("y[i] holds sorted row i's sum: sorted row i is matrix row perm[i], so "
                        "store its sum in y[perm[i]].")
            alt, alt_tol = _sections_rows_long(perm, counts[perm], inputs["col"], inputs["val"],
                                               inputs["x"])
            if np.all(np.abs(got - alt) <= alt_tol):
                return ("slot t of sorted row i was read at t · rows + i, as if every section "
                        "were rows long (ELL's layout). Section t starts at t_ptr[t] and holds "
                        "only the sorted rows that have a slot t (fewer and fewer as t grows): "
                        "slot t of sorted row i is at t_ptr[t] + i.")
        bad = np.flatnonzero(wrong)
        if bad.size:
            i = int(bad[0])
            return (f"row {i} has {int(counts[i])} nonzero{'s' * int(counts[i] != 1)}; y[{i}] must be "
                    "the sum of val · x[col] over exactly those, each once.")
        return ""


# ---- what the three kernel exercises share --------------------------------------------------------

def _outputs(rows):
    return {"y": ((int(rows),), VALUE)}


def _spec_from(row, col, val, x, rows):
    y, _, _ = spmv_host(row, col, val, x, rows)
    return {"y": y}


def _tolerance_from(row, col, val, x, rows):
    _, mag, count = spmv_host(row, col, val, x, rows)
    return {"y": row_tolerance(mag, count)}


def _x(rng, cols):
    return random_floats(rng, cols)


# ---- 14.1 COO, one thread per nonzero, atomics ---------------------------------------------------

def _coo_inputs(rng, rows):
    m = make_matrix(rng, rows)
    row, col, val = csr_to_coo(m["row_ptr"], m["col"], m["val"], rng)
    return {"row": row, "col": col, "val": val, "x": _x(rng, m["cols"]), "rows": int(rows)}


def _coo_spec(row, col, val, x, rows, blocks=0, threads=0):
    return _spec_from(row, col, val, x, rows)


def _coo_tolerance(inputs, expected):
    return _tolerance_from(inputs["row"], inputs["col"], inputs["val"], inputs["x"],
                           inputs["rows"])


def run_coo(kernel, row, col, val, x, y, blocks: int, threads: int) -> None:
    """Launch a COO kernel as the checks do: ``y`` set to 0, then
    ``kernel[blocks, threads](row, col, val, x, y)``."""
    zero(y)
    kernel[blocks, threads](row, col, val, x, y)


def _coo_launch(kernel, inputs, outputs, case):
    run_coo(kernel, inputs["row"], inputs["col"], inputs["val"], inputs["x"], outputs["y"],
            case.blocks, case.threads)


def _coo_must_read(case):
    return {"x": _used_columns(case.inputs["col"], np.asarray(case.inputs["x"]).size)}


# rows; rows % 3 picks the matrix: 301 uniform (~1,800 nonzeros), 150 banded, 95 power-law (a
# row of 63 nonzeros, many empty rows), 1 a single row; hidden 7 uniform, 1208 power-law (4
# times the largest visible, a row of 342), two random sizes. GPU: a million rows, and hidden
# 6,000,002 (power-law, about 17 million nonzeros: past 2^24 elements, as every GPU exercise's
# largest hidden case is; a matrix of 2^24 rows costs the grader 3-12 s an exercise to build and
# 6-26 s for its float64 answers, more than it adds to what is checked).
CPU_SIZES = Sizes(visible=(301, 150, 95, 1), hidden=(7, 1208), hidden_random=(2, 2, 400))
GPU_SIZES = Sizes(visible=(1_000_003, 301, 150, 95, 1), hidden=(7, 1208, 6_000_002),
                  hidden_random=(2, 2, 3_000_000))

spmv_coo = SpmvProblem(
    "spmv_coo",
    title="SpMV in COO: one thread per nonzero, atomic adds into y",
    spec=_coo_spec, make_inputs=_coo_inputs, outputs=_outputs, tolerance=_coo_tolerance,
    launch=_coo_launch, block_sizes=(32, 64, 128), visible_block_size=64,
    cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_label, reference=reference_coo,
    race_check_outputs=True, must_read=_coo_must_read, format="coo",
)


# ---- 14.2 CSR, one thread per row ----------------------------------------------------------------

def _csr_inputs(rng, rows):
    m = make_matrix(rng, rows)
    return {"row_ptr": m["row_ptr"], "col": m["col"], "val": m["val"], "x": _x(rng, m["cols"])}


def _csr_spec(row_ptr, col, val, x, blocks=0, threads=0):
    return _spec_from(row_of_each(row_ptr), col, val, x, np.asarray(row_ptr).size - 1)


def _csr_tolerance(inputs, expected):
    row_ptr = inputs["row_ptr"]
    return _tolerance_from(row_of_each(row_ptr), inputs["col"], inputs["val"], inputs["x"],
                           np.asarray(row_ptr).size - 1)


def _csr_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["row_ptr"], inputs["col"], inputs["val"],
                                      inputs["x"], outputs["y"])


def _csr_must_read(case):
    return {"x": _used_columns(case.inputs["col"], np.asarray(case.inputs["x"]).size)}


SPEED_ROWS = 1 << 22          # 4,194,304 rows, 16 nonzeros a row on average: 2^26 nonzeros
SPEED_AVERAGE = 16


def speed_matrix(rng: np.random.Generator, rows: int) -> dict:
    """The speed test's matrix: row lengths 4 .. 28 drawn in pairs that add up to 32, so that
    there are exactly 16 · rows nonzeros (the bytes moved are known from the size), distinct
    columns in each row; values and x normal floats."""
    rows = int(rows)
    cols = cols_of(rows)
    half = rng.integers(-12, 13, rows // 2)
    lengths = SPEED_AVERAGE + np.concatenate((half, -half, np.zeros(rows % 2, np.int64)))
    lengths = rng.permutation(lengths).astype(np.int64)
    col = _distinct_columns(rng, lengths, cols)
    row_ptr = np.zeros(rows + 1, np.int64)
    np.cumsum(lengths, out=row_ptr[1:])
    return {"row_ptr": row_ptr.astype(INDEX), "col": col,
            "val": rng.standard_normal(col.size, dtype=np.float32),
            "x": rng.standard_normal(cols, dtype=np.float32)}


def csr_bytes(rows) -> int:
    """What a CSR SpMV of the speed matrix must move at least: row_ptr, the column indices and
    values once, x once, y once (4 bytes each)."""
    rows = int(rows)
    return 4 * (rows + 1) + 8 * SPEED_AVERAGE * rows + 4 * cols_of(rows) + 4 * rows


def csr_sample(inputs, idx):
    """(expected, tolerance) of y at rows ``idx`` only, from those rows' nonzeros."""
    row_ptr = np.asarray(inputs["row_ptr"], np.int64)
    idx = np.asarray(idx, np.int64)
    owner, k = _ranges(row_ptr[idx], row_ptr[idx + 1])
    terms = (np.asarray(inputs["val"])[k].astype(np.float64)
             * np.asarray(inputs["x"])[np.asarray(inputs["col"])[k]].astype(np.float64))
    y, tol = _sum_terms(owner, terms, idx.size)
    return {"y": y}, {"y": tol}


def _speed_shape(rows):
    return _cdiv(rows, 256), 256


@njit_on_first_call
def _serial_loop():
    import numba

    @numba.njit(cache=False)
    def serial(row_ptr, col, val, x, y):
        for i in range(y.size):
            acc = np.float32(0.0)
            for k in range(row_ptr[i], row_ptr[i + 1]):
                acc += val[k] * x[col[k]]
            y[i] = acc
    return serial


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def parallel(row_ptr, col, val, x, y):
        for i in numba.prange(y.size):
            acc = np.float32(0.0)
            for k in range(row_ptr[i], row_ptr[i + 1]):
                acc += val[k] * x[col[k]]
            y[i] = acc
    return parallel


def _serial_csr(row_ptr, col, val, x, y):       # Baseline.run is called with keywords
    _serial_loop(row_ptr, col, val, x, y)


def _parallel_csr(row_ptr, col, val, x, y):
    _parallel_loop(row_ptr, col, val, x, y)


BASELINES = {
    "serial": Baseline("numba.njit CSR loop (1 core)", _serial_csr),
    "parallel": Baseline(f"numba.njit parallel CSR loop, a row per iteration ({cores()} cores)",
                         _parallel_csr),
}

spmv_csr = SpmvProblem(
    "spmv_csr",
    title="SpMV in CSR: one thread per row",
    spec=_csr_spec, make_inputs=_csr_inputs, outputs=_outputs, tolerance=_csr_tolerance,
    launch=_csr_launch, block_sizes=(32, 64, 128), visible_block_size=64,
    cpu_sizes=CPU_SIZES,
    gpu_sizes=Sizes(visible=GPU_SIZES.visible, hidden=GPU_SIZES.hidden,
                    hidden_random=GPU_SIZES.hidden_random, speed=SPEED_ROWS),
    size_label=_label, reference=reference_csr, must_read=_csr_must_read, format="csr",
    bytes_moved=csr_bytes, sample_spec=csr_sample, speed_inputs=speed_matrix,
    speed_launch=_speed_shape, baselines=BASELINES, vendor=cupy_csr_spmv,
    vendor_label="cupyx.scipy.sparse CSR @ x (cuSPARSE)",
    # The same algorithm as the reference: a plain one-thread-per-row kernel runs at its speed.
    # The bar leaves room for the reference's spread between runs.
    speed=SpeedBar(min_fraction_of_reference=0.6, baseline="serial", min_speedup=10.0),
)


# ---- 14.3 ELL, column-major, one thread per row ----------------------------------------------------

def _ell_inputs(rng, rows):
    m = make_matrix(rng, rows)
    ell_col, ell_val, nnz_per_row, _ = csr_to_ell(m["row_ptr"], m["col"], m["val"])
    return {"col": ell_col, "val": ell_val, "nnz_per_row": nnz_per_row,
            "x": _x(rng, m["cols"])}


def ell_rows(col, nnz_per_row):
    """The row of every slot of a column-major ELL matrix, −1 for padding."""
    rows = np.asarray(nnz_per_row).size
    width = np.asarray(col).size // max(rows, 1)
    slot_row = np.tile(np.arange(rows), width)
    slot = np.repeat(np.arange(width), rows)
    return np.where(slot < np.asarray(nnz_per_row)[slot_row], slot_row, -1)


def _ell_parts(col, val, nnz_per_row):
    row = ell_rows(col, nnz_per_row)
    real = row >= 0
    return row[real], np.asarray(col)[real], np.asarray(val)[real]


def _ell_spec(col, val, nnz_per_row, x, blocks=0, threads=0):
    row, c, v = _ell_parts(col, val, nnz_per_row)
    return _spec_from(row, c, v, x, np.asarray(nnz_per_row).size)


def _ell_tolerance(inputs, expected):
    row, c, v = _ell_parts(inputs["col"], inputs["val"], inputs["nnz_per_row"])
    return _tolerance_from(row, c, v, inputs["x"], np.asarray(inputs["nnz_per_row"]).size)


def _ell_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["col"], inputs["val"], inputs["nnz_per_row"],
                                      inputs["x"], outputs["y"])


def _ell_must_read(case):
    # The real slots must be read; padding may be skipped (by the row's length, or its −1), and
    # a kernel that stops at its −1 columns need not read the lengths.
    real = ell_rows(case.inputs["col"], case.inputs["nnz_per_row"]) >= 0
    return {"col": real, "val": real, "nnz_per_row": False,
            "x": _used_columns(case.inputs["col"], np.asarray(case.inputs["x"]).size)}


spmv_ell = SpmvProblem(
    "spmv_ell",
    title="SpMV in ELL (column-major, padded): one thread per row",
    spec=_ell_spec, make_inputs=_ell_inputs, outputs=_outputs, tolerance=_ell_tolerance,
    launch=_ell_launch, block_sizes=(32, 64, 128), visible_block_size=64,
    cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_label, reference=reference_ell,
    must_read=_ell_must_read, format="ell",
)


# ---- 14.4 JDS, rows sorted by length, one thread per sorted row -----------------------------------

def _jds_inputs(rng, rows):
    m = make_matrix(rng, rows)
    perm, t_ptr, jds_col, jds_val = csr_to_jds(m["row_ptr"], m["col"], m["val"])
    return {"perm": perm, "t_ptr": t_ptr, "col": jds_col, "val": jds_val,
            "x": _x(rng, m["cols"])}


def _jds_spec(perm, t_ptr, col, val, x, blocks=0, threads=0):
    return _spec_from(jds_rows(perm, t_ptr), col, val, x, np.asarray(perm).size)


def _jds_tolerance(inputs, expected):
    return _tolerance_from(jds_rows(inputs["perm"], inputs["t_ptr"]), inputs["col"],
                           inputs["val"], inputs["x"], np.asarray(inputs["perm"]).size)


def _jds_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["perm"], inputs["t_ptr"], inputs["col"],
                                      inputs["val"], inputs["x"], outputs["y"])


def _jds_must_read(case):
    # A thread stops after its row's last slot: the longest row's thread reads every pointer.
    return {"x": _used_columns(case.inputs["col"], np.asarray(case.inputs["x"]).size)}


spmv_jds = SpmvProblem(
    "spmv_jds",
    title="SpMV in JDS (rows sorted by length, no padding): one thread per sorted row",
    spec=_jds_spec, make_inputs=_jds_inputs, outputs=_outputs, tolerance=_jds_tolerance,
    launch=_jds_launch, block_sizes=(32, 64, 128), visible_block_size=64,
    cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_label, reference=reference_jds,
    must_read=_jds_must_read, format="jds",
)


# ---- 14.5 CSR with a warp per row, for any warp size ------------------------------------------------

WARP_BLOCKS = (64, 128, 256)        # multiples of 64: whole warps at warp size 32 and 64

TAIL_HINT = (
    "the rows longer than a warp lost their last nonzeros: each lane must take k = row_ptr[i] + "
    "lane, + warpsize, + 2·warpsize, ... while k < row_ptr[i + 1], so the last, partial round of "
    "the row (fewer nonzeros than lanes) is read too: for k in range(row_ptr[i] + lane, "
    "row_ptr[i + 1], cuda.warpsize).")
LANE_SUM_HINT = (
    "y[i] holds one lane's partial sum, not the warp's: after each lane has added its share of the "
    "row, the lanes' sums must be added together (acc += cuda.shfl_down_sync(mask, acc, offset) "
    "for offset = warpsize // 2, ..., 2, 1) before lane 0 stores.")
HALF_WARP_HINT = (
    "only half of each warp's lanes were added: the shuffle offsets start at 16 (a warp of 32), but "
    "this case runs warps of {warp} lanes. Start at cuda.warpsize // 2.")
WARP_32_HINT = (
    "at warp size {warp}, rows are handled as if a warp had 32 lanes (a lane or row index with "
    "% 32 or // 32, a loop step of 32, offsets starting at 16, a mask of 0xffffffff): use "
    "cuda.warpsize everywhere, and a mask built from it: {mask}.")


def _vector_sums(inputs, warp: int, lanes: int, stride: int):
    """y (and its tolerance) of a warp-per-row kernel whose lanes 0 .. lanes − 1 each take the
    row's nonzeros lane, lane + stride, ... (what a kernel that mixes up the warp size adds)."""
    row_ptr = np.asarray(inputs["row_ptr"], np.int64)
    owner, k = _ranges(row_ptr[:-1], row_ptr[1:])
    keep = ((k - row_ptr[owner]) % stride) < lanes
    terms = (np.asarray(inputs["val"], np.float64)[k[keep]]
             * np.asarray(inputs["x"], np.float64)[np.asarray(inputs["col"], np.int64)[k[keep]]])
    return _sum_terms(owner[keep], terms, row_ptr.size - 1)


def _full_rounds(inputs, warp: int):
    """y (and its tolerance) of a kernel that reads only the whole rounds of warp nonzeros."""
    row_ptr = np.asarray(inputs["row_ptr"], np.int64)
    lengths = np.diff(row_ptr)
    owner, k = _ranges(row_ptr[:-1], row_ptr[:-1] + lengths // warp * warp)
    terms = (np.asarray(inputs["val"], np.float64)[k]
             * np.asarray(inputs["x"], np.float64)[np.asarray(inputs["col"], np.int64)[k]])
    return _sum_terms(owner, terms, row_ptr.size - 1)


def _lane_zero_only(inputs, warp: int):
    """y (and its tolerance) of lane 0's own partial sum: no shuffle added the other lanes."""
    return _vector_sums(inputs, warp, 1, warp)


class CsrVectorProblem(SpmvProblem):
    """14.5: a warp per row. A case's size is its rows; its warp size travels in the inputs
    (``warp_size``). The hidden cases in CPU mode run at warp sizes 64 and 32 in turn
    (``portable_warp_sizes``); on a GPU at the device's only, and the judge runs the portability
    cases in CPU mode at the other."""

    portable_warp_sizes = (32, 64)

    def make_cases(self, rows_and_warps, rng, threads_for) -> list[Case]:
        """Cases of these (rows, warp size) pairs, case ``i`` in blocks of ``threads_for(i)``."""
        cases = []
        for index, (rows, warp) in enumerate(rows_and_warps):
            inputs = _csr_inputs(rng, rows)
            inputs["warp_size"] = int(warp)
            threads = threads_for(index)
            case = Case(size=int(rows), inputs=inputs, threads=threads,
                        blocks=_cdiv(int(rows) * int(warp), threads))
            case.label = (f"{_label(rows)}, {int(inputs['val'].size)} nonzeros, at warp size "
                          f"{int(warp)}")
            cases.append(case)
        return cases

    def cases(self, hidden: bool = False, seed=None):
        rng = np.random.default_rng(self.case_seed(hidden) if seed is None else seed)
        sizes = self.sizes
        if not hidden:
            warp = device_warp_size()
            return self.make_cases([(n, warp) for n in sizes.visible], rng,
                              lambda i: self.visible_block_size)
        warps = (device_warp_size(),) if device.current().is_gpu else self.portable_warp_sizes
        count, lo, hi = sizes.hidden_random
        ns = list(sizes.hidden) + [int(v) for v in rng.integers(lo, hi, size=count)]
        # The warp sizes in turn, the larger first: every hidden run in CPU mode has both.
        pairs = [(n, warps[(len(warps) - 1 - i) % len(warps)]) for i, n in enumerate(ns)]
        shapes = self.block_size_cycle(rng, len(pairs))
        return self.make_cases(pairs, rng, lambda i: shapes[i])

    def portability_cases(self, warp: int = 64, seed=None) -> list[Case]:
        """CPU-mode cases at one warp size whatever this process's backend (the judge on a GPU
        machine runs them in a CPU-mode student process)."""
        rng = np.random.default_rng(self.case_seed(True) if seed is None else seed)
        count, lo, hi = self.cpu_sizes.hidden_random
        ns = list(self.cpu_sizes.hidden) + [int(v) for v in rng.integers(lo, hi, size=count)]
        shapes = self.block_size_cycle(rng, len(ns))
        return self.make_cases([(n, warp) for n in ns], rng, lambda i: shapes[i])

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs)
        if verdict.passed:
            return verdict
        warp = int(case.inputs["warp_size"])
        error = outcome.error or ""
        if "leaves out its own lane" in error:
            verdict.hint = (f"at warp size {warp} a mask must name all the lanes that call: a "
                            f"literal 0xffffffff names only 32 of them. Build it from the warp "
                            f"size: mask = {FULL_MASK}.")
        elif "shuffle outside its mask" in error:
            verdict.hint = ACTIVEMASK_HINT
        elif "out of bounds" in error and "tid=" in error and warp != 32:
            verdict.hint = WARP_32_HINT.format(warp=warp, mask=FULL_MASK)
        elif error:
            return verdict
        got = outcome.outputs.get("y")
        if got is None or error:
            return verdict
        if warp_poisoned(got).any():
            verdict.hint = WARP_POISON_HINT
            return verdict
        got = np.asarray(got, np.float64)
        for alt, hint in ((_full_rounds(case.inputs, warp), TAIL_HINT),
                          (_lane_zero_only(case.inputs, warp), LANE_SUM_HINT),
                          (_vector_sums(case.inputs, warp, warp // 2, warp),
                           HALF_WARP_HINT.format(warp=warp))):
            if np.all(np.abs(got - alt[0]) <= alt[1]):
                verdict.hint = hint
                break
        return verdict


def _vector_launch(kernel, inputs, outputs, case):
    with at_warp_size(int(inputs["warp_size"])):
        kernel[case.blocks, case.threads](inputs["row_ptr"], inputs["col"], inputs["val"],
                                          inputs["x"], outputs["y"])


def _vector_spec(row_ptr, col, val, x, warp_size=32, blocks=0, threads=0):
    return _csr_spec(row_ptr, col, val, x)


# rows; rows % 3 picks the matrix. Visible, at the device's warp size: 29 power-law (empty rows, a
# row of 43 nonzeros: a whole warp of 32 and a tail), 25 uniform, 1. Hidden, warp sizes 64 and 32
# in turn: 101 power-law at 64 (a row of 65: a whole round and one more), 125 power-law at 32
# (4 times the largest visible; a row of 71: two rounds and a tail), 7 at 64, two random sizes.
# The fixed sizes are odd: never a multiple of the warps in a block.
VECTOR_CPU_SIZES = Sizes(visible=(29, 25, 1), hidden=(101, 125, 7), hidden_random=(2, 2, 40))

spmv_csr_vector = CsrVectorProblem(
    "spmv_csr_vector",
    title="SpMV in CSR with a warp per row, for any warp size",
    spec=_vector_spec, make_inputs=_csr_inputs, outputs=_outputs, tolerance=_csr_tolerance,
    launch=_vector_launch, block_sizes=WARP_BLOCKS, visible_block_size=128,
    cpu_sizes=VECTOR_CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_label,
    reference=csr_vector_kernel, must_read=_csr_must_read, format="csr",
)


# ---- 14.6 hybrid ELL + COO: the width, and the kernel -------------------------------------------------

def hybrid_bytes(lengths, width: int) -> int:
    """The bytes of a hybrid ELL + COO matrix that depend on its ELL width K: ELL's slots, a
    column index and a value each (8 · rows · K), and COO's leftover nonzeros, a row, a column and
    a value each (12 · Σ max(len_i − K, 0))."""
    lengths = np.asarray(lengths, np.int64)
    width = int(width)
    return 8 * lengths.size * width + 12 * int(np.maximum(lengths - width, 0).sum())


COO_COST = 3      # a COO nonzero costs about three ELL slots (Bell and Garland, SC 2009)


def hybrid_cost(lengths, width: int) -> int:
    """What a hybrid ELL + COO SpMV costs with ELL width K, in ELL slots: every row reads K slots
    (rows · K, padding included), and every nonzero left to COO costs ``COO_COST`` slots (its
    row index, an uncoalesced read of x, an atomic add into y): rows · K + 3 · Σ max(len_i − K, 0)."""
    lengths = np.asarray(lengths, np.int64)
    width = int(width)
    return lengths.size * width + COO_COST * int(np.maximum(lengths - width, 0).sum())


def best_width(lengths) -> int:
    """The smallest ELL width K of the lowest :func:`hybrid_cost`: slot K costs rows and saves
    3 for each row with K nonzeros or more, so K grows while more than a third of the rows have
    K + 1 nonzeros or more (two widths tie when exactly a third do)."""
    lengths = np.sort(np.asarray(lengths, np.int64))
    rows = lengths.size
    width = 0
    while COO_COST * int(rows - np.searchsorted(lengths, width + 1, side="left")) > rows:
        width += 1
    return width


def csr_to_hybrid(row_ptr, col, val, width: int, rng: np.random.Generator | None = None):
    """Hybrid ELL + COO of a CSR matrix with ELL width ``width``: ``(ell_col, ell_val, ell_len,
    coo_row, coo_col, coo_val)``. The first ``min(len_i, width)`` nonzeros of row ``i`` in ELL
    (column-major, ``rows × width`` slots, padding column −1 and value 0, ``ell_len[i]`` the real
    ones), the rest in COO (in a random order when ``rng`` is given)."""
    row_ptr = np.asarray(row_ptr, np.int64)
    rows = row_ptr.size - 1
    width = int(width)
    row = row_of_each(row_ptr).astype(np.int64)
    slot = np.arange(row.size) - row_ptr[row]
    in_ell = slot < width
    ell_col = np.full(width * rows, -1, INDEX)
    ell_val = np.zeros(width * rows, VALUE)
    where = slot[in_ell] * rows + row[in_ell]
    ell_col[where] = np.asarray(col)[in_ell]
    ell_val[where] = np.asarray(val)[in_ell]
    ell_len = np.minimum(np.diff(row_ptr), width).astype(INDEX)
    coo_row, coo_col, coo_val = (row[~in_ell].astype(INDEX), np.asarray(col, INDEX)[~in_ell],
                                 np.asarray(val, VALUE)[~in_ell])
    if rng is not None:
        order = rng.permutation(coo_row.size)
        coo_row, coo_col, coo_val = coo_row[order], coo_col[order], coo_val[order]
    return (ell_col, ell_val, ell_len, np.ascontiguousarray(coo_row),
            np.ascontiguousarray(coo_col), np.ascontiguousarray(coo_val))


def hybrid_parts(inputs):
    """(row, col, val) of every real nonzero of a hybrid case: ELL's real slots, then COO's."""
    row, c, v = _ell_parts(inputs["ell_col"], inputs["ell_val"], inputs["ell_len"])
    return (np.concatenate((row, np.asarray(inputs["coo_row"], np.int64))),
            np.concatenate((c, np.asarray(inputs["coo_col"]))),
            np.concatenate((v, np.asarray(inputs["coo_val"]))))


def _hybrid_inputs(rng, rows, width=None):
    m = make_matrix(rng, rows)
    lengths = np.diff(m["row_ptr"])
    if width is None:
        width = best_width(lengths)
    elif width == "longest":
        width = int(lengths.max(initial=0))
    parts = csr_to_hybrid(m["row_ptr"], m["col"], m["val"], width, rng)
    return dict(zip(("ell_col", "ell_val", "ell_len", "coo_row", "coo_col", "coo_val"), parts),
                x=_x(rng, m["cols"]))


def _hybrid_spec(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, blocks=0, threads=0):
    inputs = dict(ell_col=ell_col, ell_val=ell_val, ell_len=ell_len, coo_row=coo_row,
                  coo_col=coo_col, coo_val=coo_val)
    row, c, v = hybrid_parts(inputs)
    return _spec_from(row, c, v, x, np.asarray(ell_len).size)


def _hybrid_tolerance(inputs, expected):
    row, c, v = hybrid_parts(inputs)
    return _tolerance_from(row, c, v, inputs["x"], np.asarray(inputs["ell_len"]).size)


def run_hybrid(kernel, ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y,
               threads: int = 64) -> None:
    """Launch a hybrid kernel as the checks do: ``y`` set to 0, then one thread per row and one
    per COO nonzero, ``ceil((rows + coo nonzeros) / threads)`` blocks of ``threads``."""
    zero(y)
    blocks = _cdiv(y.size + coo_val.size, threads)
    kernel[blocks, threads](ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y)


def _hybrid_launch(kernel, inputs, outputs, case):
    run_hybrid(kernel, *(inputs[k] for k in ("ell_col", "ell_val", "ell_len", "coo_row",
                                              "coo_col", "coo_val", "x")), outputs["y"],
               threads=case.threads)


def _hybrid_must_read(case):
    real = ell_rows(case.inputs["ell_col"], case.inputs["ell_len"]) >= 0
    used = _used_columns(np.concatenate((np.asarray(case.inputs["ell_col"]),
                                         np.asarray(case.inputs["coo_col"]))),
                         np.asarray(case.inputs["x"]).size)
    return {"ell_col": real, "ell_val": real, "ell_len": False, "x": used}


def _diagnose_hybrid(inputs, got) -> str:
    rows = np.asarray(inputs["ell_len"]).size
    row, c, v = _ell_parts(inputs["ell_col"], inputs["ell_val"], inputs["ell_len"])
    ell_only = _sum_terms(row, np.asarray(v, np.float64) * np.asarray(inputs["x"], np.float64)[c],
                          rows)
    coo_row = np.asarray(inputs["coo_row"], np.int64)
    coo_terms = (np.asarray(inputs["coo_val"], np.float64)
                 * np.asarray(inputs["x"], np.float64)[np.asarray(inputs["coo_col"], np.int64)])
    coo_only = _sum_terms(coo_row, coo_terms, rows)
    if coo_row.size and np.all(np.abs(got - ell_only[0]) <= ell_only[1]):
        return ("only the ELL part was added: the rows longer than the ELL width have their other "
                "nonzeros in the COO part (coo_row, coo_col, coo_val), and the threads past the "
                "last row (t − rows < coo_val.size) must add those into y[coo_row[k]].")
    if np.asarray(inputs["ell_col"]).size and np.all(np.abs(got - coo_only[0]) <= coo_only[1]):
        return ("only the COO part was added: threads 0 .. rows − 1 must add up their row's ELL "
                "slots (slot s of row i at s · rows + i, ell_len[i] of them) into y[i].")
    if np.asarray(inputs["ell_col"]).size:
        row_major, row_major_tol = _row_major_ell(inputs["ell_col"], inputs["ell_val"],
                                                  inputs["ell_len"], inputs["x"])
        if np.all(np.abs(got - row_major - coo_only[0]) <= row_major_tol + coo_only[1]):
            return ("the ELL slots were read row-major (i · width + s); the ELL part is "
                    "column-major: slot s of row i is at s · rows + i, with rows = y.size.")
    return ""


HYBRID_RACE_HINT = (
    "y[i] of a row that overflowed into the COO part is written by its ELL thread and added to by "
    "COO threads in the same launch: a plain store there can come after an atomic add and erase "
    "it (or an add can read y[i] before the store). Make the ELL thread's update an atomic add "
    "too (y starts at 0), or store only when the row has no COO nonzeros (ell_len[i] < width).")


class HybridProblem(SpmvProblem):
    """14.6: hybrid ELL + COO in one launch, a thread per row and one per COO nonzero. The hidden
    cases include a width of 0 (all COO) and the longest row (no COO at all)."""

    def cases(self, hidden: bool = False, seed=None):
        cases = super().cases(hidden, seed)
        rng = np.random.default_rng((self.case_seed(hidden) if seed is None else seed) + 1)
        for case in cases:
            case.blocks = _cdiv(int(case.size) + np.asarray(case.inputs["coo_val"]).size,
                                case.threads)
        if hidden and len(cases) >= 3:
            # the first hidden case all COO, the last all ELL: a kernel must not need both parts
            for case, width in ((cases[0], 0), (cases[-1], "longest")):
                case.inputs = _hybrid_inputs(rng, case.size, width)
                case.blocks = _cdiv(int(case.size) + case.inputs["coo_val"].size, case.threads)
        for case in cases:
            ell = int(np.asarray(case.inputs["ell_col"]).size) // max(int(case.size), 1)
            coo = int(np.asarray(case.inputs["coo_val"]).size)
            case.label = f"{_label(case.size)}, ELL width {ell}, {coo} COO nonzeros"
        return cases

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        verdict = super().judge(case, outcome, show_inputs)
        error = outcome.error or ""
        if not verdict.passed and ("GlobalMemoryRace" in error or "global-memory race" in error):
            if "atomically" in error:
                verdict.hint = HYBRID_RACE_HINT
        elif not verdict.passed and "out of bounds" in error and "tid=" in error:
            verdict.hint = ("a thread read or wrote outside an array: the grid has one thread per "
                            "row and one per COO nonzero, and more in its last block. Thread t "
                            "takes row t if t < rows, COO nonzero t − rows if that is below "
                            "coo_val.size, and nothing otherwise.")
        return verdict


spmv_hybrid = HybridProblem(
    "spmv_hybrid",
    title="SpMV in hybrid ELL + COO: a thread per row and per leftover nonzero, one launch",
    spec=_hybrid_spec, make_inputs=_hybrid_inputs, outputs=_outputs,
    tolerance=_hybrid_tolerance, launch=_hybrid_launch, block_sizes=(32, 64, 128),
    visible_block_size=64, cpu_sizes=CPU_SIZES, gpu_sizes=GPU_SIZES, size_label=_label,
    reference=reference_hybrid, race_check_outputs=True, must_read=_hybrid_must_read,
    format="hybrid",
)


# ---- 14.6 the width: a host function of the row lengths ------------------------------------------

def _width_inputs(rng, rows):
    """Row lengths of a chapter matrix (the kind picked by the size, as for the kernels)."""
    return {"lengths": np.diff(make_matrix(rng, rows)["row_ptr"]).astype(INDEX)}


def _width_call(fn, inputs, outputs, case):
    got = fn(np.array(inputs["lengths"], copy=True))
    try:
        width = int(got)
        if width != got:
            raise ValueError
    except (TypeError, ValueError):
        raise TypeError(f"hybrid_width(lengths) must return a whole number (the ELL width K); "
                        f"it returned {got!r}") from None
    outputs["width"][0] = width


class WidthProblem(Problem):
    """14.6's width: ``hybrid_width(lengths)`` returns K; right when :func:`hybrid_cost` at K is
    the lowest any K gives (two widths may tie)."""

    def judge(self, case, outcome, show_inputs: bool = True) -> Verdict:
        lengths = np.asarray(case.inputs["lengths"], np.int64)
        name, where = self.name, case.describe()
        if outcome.error:
            return Verdict(name, False, where, outcome.error, "")
        got = np.asarray(outcome.outputs.get("width", [np.nan]), np.float64)
        if got.shape != (1,) or not np.isfinite(got[0]):
            return Verdict(name, False, where, "no width came back", "")
        width = int(got[0])
        best = best_width(lengths)
        longest = int(lengths.max(initial=0))
        if width < 0 or width > max(longest, 0) and width != best:
            return Verdict(name, False, where, f"K = {width}: a width must be 0 .. the longest row "
                           f"({longest})", "")
        have, fewest = hybrid_cost(lengths, width), hybrid_cost(lengths, best)
        if have == fewest:
            return Verdict(name, True, where)
        rows = lengths.size
        message = (f"K = {width} costs {have:,} ELL slots' time; the best K costs {fewest:,} "
                   f"({have / max(fewest, 1):.2f} times less)")
        if width == longest:
            hint = ("K = the longest row is plain ELL: every row pays for the longest one's "
                    "slots. Slot K costs `rows` and saves 3 for every row with K nonzeros or more.")
        elif width < best:
            using = int((lengths >= width + 1).sum())
            hint = (f"{using} of {rows} rows have {width + 1} nonzeros or more: slot {width + 1} "
                    f"would cost {rows} and save 3 · {using} = {3 * using}, more than it costs. "
                    "Keep adding slots while more than a third of the rows would use the next.")
        else:
            using = int((lengths >= width).sum())
            hint = (f"only {using} of {rows} rows have {width} nonzeros or more: slot {width} "
                    f"costs {rows} and saves 3 · {using} = {3 * using}, less than it costs "
                    "(a slot pays off only while more than a third of the rows use it).")
        return Verdict(name, False, where, message, hint)


def _width_spec(lengths, blocks=0, threads=0):
    return {"width": np.array([float(best_width(lengths))])}


def _width_label(rows) -> str:
    return f"the row lengths of a {_label(rows)} matrix"


hybrid_width = WidthProblem(
    "hybrid_width",
    title="The ELL width of a hybrid ELL + COO matrix that costs the least",
    spec=_width_spec, make_inputs=_width_inputs,
    outputs=lambda rows: {"width": ((1,), np.float64)},
    tolerance=lambda inputs, expected: {"width": np.zeros(1)}, launch=_width_call,
    on_device=False, size_label=_width_label,
    # rows (the kind by rows % 3): 2000 power-law, 1999 uniform, 1998 banded, 1, 2. Hidden 8003
    # power-law, 3 and two random sizes.
    cpu_sizes=Sizes(visible=(2000, 1999, 1998, 1, 2), hidden=(8003, 3), hidden_random=(2, 4, 5000)),
    gpu_sizes=Sizes(visible=(2000, 1999, 1998, 1, 2), hidden=(8003, 3), hidden_random=(2, 4, 5000)),
)
