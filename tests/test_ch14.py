"""Chapter 14: do the SpMV checks pass correct COO, CSR, ELL, JDS, warp-per-row CSR and hybrid
kernels written several ways, and fail every classic sparse bug (COO without atomics, a missing
bounds guard, a CSR loop off by one in row_ptr, empty rows never written, ELL read row-major, a JDS
sum stored at the sorted row's index or its sections read as ELL's, a warp per row that drops the
row's tail, skips the shuffles or assumes 32 lanes, a hybrid that stores beside COO's atomics or
forgets a part) with a verdict that names it? Does the hybrid's width check accept exactly the
widths of the lowest cost? Are the
matrices as the chapter says (banded, uniform and power-law row lengths, empty rows, a long row,
no duplicate columns in a row, not square), are the conversions right, do the speed test's sampled
answers agree with the whole product, and is the tolerance the error bound of each row's sum
(a sum one rounding short of float32 passes, a genuinely wrong term fails)?"""

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import assert_judged, verdict_text

ch14 = ag.problems.ch14
CPU = not ag.backend.is_gpu


def _skip_out_of_bounds_on_a_gpu(expected, writes_outside: bool = False) -> None:
    """A kernel without its bounds check (or one that adds into ``y[col[k]]``, where there are
    more columns than rows) reaches outside its arrays on a GPU, and the illegal address ends
    this process's CUDA context, failing every later GPU test here (the judge's student process
    is restarted; a test process cannot be). CPU mode checks every index and names the bug."""
    if not CPU and (writes_outside or (expected and expected.startswith("guard with"))):
        pytest.skip("an out-of-bounds access ends a GPU process's CUDA context: CPU mode "
                    "checks every index and names the bug")


# ---- the matrices, the formats, the spec -------------------------------------------------------

def test_matrices_have_the_structure_the_chapter_describes():
    seen = set()
    for problem in (p for p in ch14.PROBLEMS if p.on_device):
        for hidden in (False, True):
            for case in problem.cases(hidden=hidden):
                seen.add(ch14.kind_of(case.size))
                x = case.inputs["x"]
                assert x.size == ch14.cols_of(case.size) and x.size != case.size
    assert seen == set(ch14.KINDS)
    rng = np.random.default_rng(5)
    for rows, kind in ((300, "uniform"), (1208, "power_law"), (150, "banded")):
        m = ch14.make_matrix(rng, rows, kind)
        lengths = np.diff(m["row_ptr"])
        for i in range(rows):
            row = m["col"][m["row_ptr"][i]:m["row_ptr"][i + 1]]
            assert np.unique(row).size == row.size            # no duplicate columns
            assert row.size == 0 or (row.min() >= 0 and row.max() < m["cols"])
        if kind != "banded":
            assert (lengths == 0).any()                         # empty rows
        if kind == "power_law":
            assert lengths.max() >= 8 * max(np.median(lengths), 1)   # a row much longer
        if kind == "banded":
            assert lengths.max() <= 5 and lengths.min() >= 1


def test_conversions_keep_every_nonzero():
    m = ch14.small_example()
    row, col, val = ch14.csr_to_coo(m["row_ptr"], m["col"], m["val"], np.random.default_rng(1))
    dense = np.zeros_like(m["dense"])
    dense[row, col] = val
    assert np.array_equal(dense, m["dense"])
    e_col, e_val, e_len, width = ch14.csr_to_ell(m["row_ptr"], m["col"], m["val"])
    rows = m["dense"].shape[0]
    assert width == 4 and e_len.tolist() == [2, 0, 4, 1, 2]
    assert e_col.size == rows * width and (e_col[e_val == 0] == -1).all()
    dense[:] = 0
    for t in range(width):
        for i in range(rows):
            if e_col[t * rows + i] >= 0:                        # column-major slots
                dense[i, e_col[t * rows + i]] = e_val[t * rows + i]
    assert np.array_equal(dense, m["dense"])
    s = ch14.storage_bytes(m["row_ptr"])
    assert (s["nnz"], s["coo"], s["csr"], s["ell"]) == (9, 108, 96, 8 * 20 + 20)


def test_the_speed_sample_agrees_with_the_whole_product():
    from autograder.problems.ch14.specs import csr_sample
    m = ch14.speed_matrix(np.random.default_rng(3), 1001)
    assert m["val"].size == 16 * 1001
    y, mag, count = ch14.spmv_host(ch14.row_of_each(m["row_ptr"]), m["col"], m["val"], m["x"],
                                   1001)
    idx = np.array([0, 5, 999, 1000])
    expected, tol = csr_sample(m, idx)
    assert np.allclose(expected["y"], y[idx], rtol=1e-12, atol=0)
    assert np.array_equal(tol["y"], ch14.row_tolerance(mag[idx], count[idx]))


def test_the_tolerance_is_the_bound_of_each_rows_float32_sum():
    """A float32 sum in the worst order of a row's terms passes; one term left out fails."""
    case = ch14.spmv_csr.cases()[0]
    expected, tol = ch14.spmv_csr.reference_values(case)
    row_ptr, col, val, x = (case.inputs[k] for k in ("row_ptr", "col", "val", "x"))
    worst = np.zeros(row_ptr.size - 1, np.float32)
    missing = np.zeros(row_ptr.size - 1)
    for i in range(row_ptr.size - 1):
        terms = (val[row_ptr[i]:row_ptr[i + 1]] * x[col[row_ptr[i]:row_ptr[i + 1]]]).astype(
            np.float32)
        acc = np.float32(0)
        for t in sorted(terms, key=abs):                         # smallest first, in float32
            acc = np.float32(acc + t)
        worst[i] = acc
        missing[i] = float(acc) - (float(terms[-1]) if terms.size else 0.0)
    assert np.all(np.abs(worst - expected["y"]) <= tol["y"])
    long_rows = np.diff(row_ptr) > 0
    assert np.any(np.abs(missing - expected["y"])[long_rows] > tol["y"][long_rows])


# ---- 14.1 COO ------------------------------------------------------------------------------------

@cuda.jit
def coo_ok(row, col, val, x, y):
    k = cuda.grid(1)
    if k < val.size:
        cuda.atomic.add(y, row[k], val[k] * x[col[k]])


@cuda.jit
def coo_grid_stride(row, col, val, x, y):
    for k in range(cuda.grid(1), val.size, cuda.gridsize(1)):
        product = val[k] * x[col[k]]
        cuda.atomic.add(y, row[k], product)


@cuda.jit
def coo_no_atomics(row, col, val, x, y):
    k = cuda.grid(1)
    if k < val.size:
        y[row[k]] += val[k] * x[col[k]]


@cuda.jit
def coo_no_guard(row, col, val, x, y):
    k = cuda.grid(1)
    cuda.atomic.add(y, row[k], val[k] * x[col[k]])


@cuda.jit
def coo_swapped(row, col, val, x, y):
    k = cuda.grid(1)
    if k < val.size:
        cuda.atomic.add(y, col[k], val[k] * x[row[k]])


@cuda.jit
def coo_does_nothing(row, col, val, x, y):
    pass


@pytest.mark.parametrize("fn,expected", [
    (coo_ok, None),
    (coo_grid_stride, None),
    (coo_no_atomics, "cuda.atomic.add(y, row[k]"),
    (coo_no_guard, "guard with `if k < val.size:`"),
    (coo_swapped, "add into y[row[k]] the product"),
    (coo_does_nothing, "expected"),
])
def test_coo_verdict(fn, expected):
    if fn is coo_no_atomics and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    _skip_out_of_bounds_on_a_gpu(expected, writes_outside=fn is coo_swapped)
    assert_judged(ch14.spmv_coo, fn, expected)


# ---- 14.2 CSR ------------------------------------------------------------------------------------

def _csr(lo=0, hi=0, guard=True, store_empty=True):
    """A one-thread-per-row CSR kernel: right with the defaults, else with one classic bug (the
    loop over range(row_ptr[i] + lo, row_ptr[i + 1] + hi); no bounds guard; empty rows skipped)."""
    @cuda.jit
    def kernel(row_ptr, col, val, x, y):
        i = cuda.grid(1)
        if guard and i >= y.size:
            return
        start, end = row_ptr[i] + lo, row_ptr[i + 1] + hi
        if not store_empty and end <= start:
            return
        acc = float32(0.0)
        for k in range(start, min(end, val.size)):
            acc += val[k] * x[col[k]]
        y[i] = acc
    return kernel


@cuda.jit
def csr_while_float64(row_ptr, col, val, x, y):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < row_ptr.size - 1:
        k = row_ptr[i]
        end = row_ptr[i + 1]
        acc = 0.0                                   # a float64 accumulator: more accurate
        while k < end:
            acc += val[k] * x[col[k]]
            k += 1
        y[i] = acc


@cuda.jit
def csr_rows_from_x(row_ptr, col, val, x, y):
    i = cuda.grid(1)
    if i < x.size and i < row_ptr.size - 1:          # x.size taken for the rows: wrong
        acc = float32(0.0)
        for k in range(row_ptr[i], row_ptr[i + 1]):
            acc += val[k] * x[col[k]]
        y[i] = acc


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _csr(), None),
    ("while_float64", csr_while_float64, None),
    ("next_rows_first", _csr(hi=1), "takes the first nonzero of the next row"),
    ("shifted", _csr(lo=1, hi=1), "shifted by one nonzero"),
    ("last_left_out", _csr(hi=-1), "leaves out the row's last nonzero"),
    ("no_guard", _csr(guard=False), "guard with `if i < y.size:`"),
    ("empty_rows", _csr(store_empty=False), "only the empty rows are wrong"),
])
def test_csr_verdict(name, fn, expected):
    _skip_out_of_bounds_on_a_gpu(expected)
    assert_judged(ch14.spmv_csr, fn, expected)


def test_a_kernel_bounded_by_x_passes_only_while_the_matrix_is_not_wider():
    # The cases' matrices have more columns than rows: x.size bounds nothing here, and the
    # check passes it; the same kernel on a matrix with fewer columns than rows would skip rows.
    assert all(ch14.cols_of(n) > n for n in (1, 7, 95, 1208))
    assert verdict_text(ch14.spmv_csr, csr_rows_from_x, hidden=False) is None


def test_csr_host_copy_is_caught():
    class HostCSR:
        def __getitem__(self, launch):
            def run(row_ptr, col, val, x, y):
                rp, c, v, xx = (a.copy_to_host() for a in (row_ptr, col, val, x))
                out = np.zeros(rp.size - 1, np.float32)
                for i in range(rp.size - 1):
                    out[i] = np.dot(v[rp[i]:rp[i + 1]], xx[c[rp[i]:rp[i + 1]]])
                y.copy_to_device(out)
            return run
    # The copies to the host are decoys in CPU mode: the host's column indices are garbage, so
    # the call fails in host code before its values can be judged, and the hint says so; on a GPU
    # the copies themselves are named.
    failure = verdict_text(ch14.spmv_csr, HostCSR(), hidden=False)
    assert failure is not None and "host" in failure, failure


# ---- 14.3 ELL ------------------------------------------------------------------------------------

@cuda.jit
def ell_ok(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    if i < rows:
        acc = float32(0.0)
        for t in range(nnz_per_row[i]):
            acc += val[t * rows + i] * x[col[t * rows + i]]
        y[i] = acc


@cuda.jit
def ell_skip_padding(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    if i < rows:
        acc = float32(0.0)
        for t in range(col.size // rows):           # every slot, padding skipped by its column
            c = col[t * rows + i]
            if c >= 0:
                acc += val[t * rows + i] * x[c]
        y[i] = acc


@cuda.jit
def ell_row_major(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    if i < rows:
        width = col.size // rows
        acc = float32(0.0)
        for t in range(nnz_per_row[i]):
            acc += val[i * width + t] * x[col[i * width + t]]
        y[i] = acc


@cuda.jit
def ell_no_guard(col, val, nnz_per_row, x, y):
    i = cuda.grid(1)
    rows = y.size
    acc = float32(0.0)
    for t in range(nnz_per_row[i]):
        acc += val[t * rows + i] * x[col[t * rows + i]]
    y[i] = acc


@pytest.mark.parametrize("fn,expected", [
    (ell_ok, None),
    (ell_skip_padding, None),
    (ell_row_major, "the arrays are column-major"),
    (ell_no_guard, "guard with `if i < y.size:`"),
])
def test_ell_verdict(fn, expected):
    _skip_out_of_bounds_on_a_gpu(expected)
    assert_judged(ch14.spmv_ell, fn, expected)


# ---- 14.4 JDS ------------------------------------------------------------------------------------

def _jds(permuted=True, sections_rows_long=False, guard=True):
    """A one-thread-per-sorted-row JDS kernel: right with the defaults, else with one classic bug
    (the sum stored at y[i]; slot t read at t * rows + i; no bounds guard)."""
    @cuda.jit
    def kernel(perm, t_ptr, col, val, x, y):
        i = cuda.grid(1)
        rows = perm.size
        if guard and i >= rows:
            return
        acc = float32(0.0)
        t = 0
        while t < t_ptr.size - 1 and t_ptr[t] + i < t_ptr[t + 1]:
            k = t * rows + i if sections_rows_long else t_ptr[t] + i
            if k < val.size:
                acc += val[k] * x[col[k]]
            t += 1
        if permuted:
            y[perm[i]] = acc
        else:
            y[i] = acc
    return kernel


def test_jds_conversion_sorts_rows_longest_first_and_keeps_every_nonzero():
    m = ch14.small_example()
    perm, t_ptr, col, val = ch14.csr_to_jds(m["row_ptr"], m["col"], m["val"])
    assert perm.tolist() == [2, 0, 4, 3, 1] and t_ptr.tolist() == [0, 4, 7, 8, 9]
    dense = np.zeros_like(m["dense"])
    dense[ch14.jds_rows(perm, t_ptr), col] = val
    assert np.array_equal(dense, m["dense"])
    assert ch14.storage_bytes(m["row_ptr"])["jds"] == 8 * 9 + 4 * 5 + 4 * 5


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _jds(), None),
    ("unpermuted", _jds(permuted=False), "store its sum in y[perm[i]]"),
    ("sections_rows_long", _jds(sections_rows_long=True), "as if every section were rows long"),
    ("no_guard", _jds(guard=False), "guard with `if i < y.size:`"),
])
def test_jds_verdict(name, fn, expected):
    _skip_out_of_bounds_on_a_gpu(expected)
    assert_judged(ch14.spmv_jds, fn, expected)


# ---- the course's kernels, the notebook's helpers ------------------------------------------------

def test_course_kernels_pass():
    for problem in (p for p in ch14.PROBLEMS if p.on_device):
        assert verdict_text(problem, problem.reference_kernel(), hidden=False) is None


def test_small_example_and_storage_table():
    for fmt, kernel in (("coo", coo_ok), ("csr", _csr()), ("ell", ell_ok), ("jds", _jds()),
                        ("csr_vector", ch14.csr_vector_kernel()),
                        ("hybrid", ch14.reference_hybrid())):
        got, expected = ch14.check_small(kernel, fmt)
        assert np.allclose(got, expected) and np.allclose(expected, ch14.small_example()["dense"]
                                                          @ ch14.small_example()["x"])
    table = {row["kind"]: row for row in ch14.storage_table(600)}
    assert table["banded"]["ell_slots_per_nonzero"] < 1.5
    assert table["power-law row lengths"]["ell_slots_per_nonzero"] > 10
    assert table["power-law row lengths"]["ell"] > table["power-law row lengths"]["coo"]


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """Every course kernel of the chapter compiles for compute capability 9.0."""
    assert_compiles_for_h200("ch14", (
        "r.cuda, r.float32, r.uint64 = cuda, numba.float32, numba.uint64\n"
        "i = types.int32[::1]; f = types.float32[::1]\n"
        "k = r._spmv_kernels.__wrapped__()\n"
        "sigs = [(k['coo'], (i, i, f, f, f)), (k['csr'], (i, i, f, f, f)),\n"
        "        (k['ell'], (i, f, i, f, f)), (k['jds'], (i, i, i, f, f, f)),\n"
        "        (k['csr_vector'], (i, i, f, f, f)),\n"
        "        (k['hybrid'], (i, f, i, i, i, f, f, f))]\n"), 6)


def test_cpu_baselines_are_right_and_gpu_timing_says_it_needs_a_gpu():
    rows = ch14.time_cpu_spmv(3001)
    assert len(rows) == 2 and all(r["right"] and r["ms"] > 0 for r in rows), rows
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch14.measure()


# ---- 14.5 CSR with a warp per row ------------------------------------------------------------------

def _vector(tail=True, shuffle=True, offsets16=False):
    """A warp-per-row kernel: right with the defaults, else with one bug (only whole rounds of a
    warp read; no shuffles, so y[i] is lane 0's own sum; offsets from 16, a warp of 32's)."""
    from numba import uint64

    @cuda.jit
    def kernel(row_ptr, col, val, x, y):
        w = cuda.warpsize
        mask = ~uint64(0) >> (64 - cuda.warpsize)
        lane = cuda.threadIdx.x % w
        i = cuda.grid(1) // w
        acc = float32(0.0)
        if i < y.size:
            end = row_ptr[i + 1]
            if not tail:
                end = row_ptr[i] + (end - row_ptr[i]) // w * w
            for k in range(row_ptr[i] + lane, end, w):
                acc += val[k] * x[col[k]]
        offset = 16 if offsets16 else cuda.warpsize // 2
        while shuffle and offset > 0:
            acc += cuda.shfl_down_sync(mask, acc, offset)
            offset //= 2
        if lane == 0 and i < y.size:
            y[i] = acc
    return kernel


def test_warp_per_row_cases_are_what_the_exercise_promises():
    p = ch14.spmv_csr_vector
    visible, hidden = p.cases(), p.cases(hidden=True, seed=3)
    longest = lambda c: int(np.diff(c.inputs["row_ptr"]).max())          # noqa: E731
    warp = lambda c: int(c.inputs["warp_size"])                          # noqa: E731
    assert any(longest(c) > warp(c) for c in visible)                    # rows longer than a warp
    assert any(np.any(np.diff(c.inputs["row_ptr"]) == 0) for c in visible)    # empty rows
    for c in visible + hidden:
        assert c.threads % 64 == 0 and c.blocks * c.threads >= c.size * warp(c)
    fixed = [c for c in visible + hidden if c.size in p.cpu_sizes.visible + p.cpu_sizes.hidden]
    assert all(c.size % 2 == 1 for c in fixed)      # never a multiple of the warps in a block
    if CPU:
        assert {warp(c) for c in hidden} == {32, 64} and warp(hidden[0]) == 64
        assert any(longest(c) > 2 * warp(c) for c in hidden)   # two whole rounds and a tail
        assert any(longest(c) > 64 and warp(c) == 64 for c in hidden)
    assert [warp(c) for c in p.portability_cases(64, seed=3)] == [64] * len(hidden)


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _vector(), None),
    ("missing_tail", _vector(tail=False), "lost their last nonzeros"),
    ("no_shuffles", _vector(shuffle=False), "one lane's partial sum"),
])
def test_warp_per_row_verdict(name, fn, expected):
    assert_judged(ch14.spmv_csr_vector, fn, expected, hidden=False)


@pytest.mark.skipif(not CPU, reason="warp size 64 runs in CPU mode only")
def test_warp_per_row_at_warp_size_64():
    """The course's kernel is right at 64 lanes; one whose shuffles start at 16 is named."""
    p = ch14.spmv_csr_vector
    # 29 power-law rows (a row of 43) at 64 lanes: a tree from offset 16 misses lanes 32-42
    cases = p.make_cases([(29, 64)], np.random.default_rng(5), lambda i: 128)
    assert p.verdict(ch14.csr_vector_kernel(), cases).passed
    failure = p.verdict(_vector(offsets16=True), cases)
    assert not failure.passed and "only half of each warp" in failure.hint, failure


# ---- 14.6 hybrid ELL + COO ---------------------------------------------------------------------------

def test_best_width_has_the_lowest_cost_and_the_hybrid_keeps_every_nonzero():
    rng = np.random.default_rng(7)
    for rows in (1, 2, 3, 50, 301, 1000):
        for kind in ch14.KINDS:
            m = ch14.make_matrix(rng, rows, kind)
            lengths = np.diff(m["row_ptr"])
            costs = [ch14.hybrid_cost(lengths, k) for k in range(int(lengths.max()) + 2)]
            best = ch14.specs.best_width(lengths)
            assert costs[best] == min(costs) and best == int(np.argmin(costs))
            for width in {0, best, int(lengths.max())}:
                parts = ch14.csr_to_hybrid(m["row_ptr"], m["col"], m["val"], width, rng)
                e_col, e_val, e_len, c_row, c_col, c_val = parts
                assert e_col.size == width * rows and (e_len == np.minimum(lengths, width)).all()
                dense = np.zeros((rows, m["cols"]), np.float32)
                dense[ch14.row_of_each(m["row_ptr"]), m["col"]] = m["val"]
                rebuilt = np.zeros_like(dense)
                real = ch14.ell_rows(e_col, e_len)
                rebuilt[real[real >= 0], e_col[real >= 0]] = e_val[real >= 0]
                rebuilt[c_row, c_col] = c_val
                assert np.array_equal(rebuilt, dense)
    # a tie: exactly a third of the rows have 1 nonzero or more, so K = 0 and K = 1 cost the same
    tie = np.array([1, 0, 0])
    assert ch14.hybrid_cost(tie, 0) == ch14.hybrid_cost(tie, 1)


def _width(rule):
    def hybrid_width(lengths):
        return rule(np.asarray(lengths))
    return hybrid_width


@pytest.mark.parametrize("rule,expected", [
    (lambda l: int(np.sort(l)[::-1][l.size // 3]), None),
    (lambda l: ch14.specs.best_width(l) + (1 if (l >= 1).sum() * 3 == l.size else 0), None),
    (lambda l: int(l.max(initial=0)), "plain ELL"),
    (lambda l: max(ch14.specs.best_width(l) - 1, 0) if l.size > 2 else ch14.specs.best_width(l),
     "more than a third of the rows"),
    (lambda l: ch14.specs.best_width(l) + 1 if l.size > 2 else ch14.specs.best_width(l),
     "less than it costs"),
    (lambda l: 2.5, "whole number"),
])
def test_hybrid_width_verdict(rule, expected):
    assert_judged(ch14.hybrid_width, _width(rule), expected)


def test_hybrid_hidden_cases_hold_a_matrix_all_in_coo_and_one_all_in_ell():
    cases = ch14.spmv_hybrid.cases(hidden=True, seed=11)
    widths = [c.inputs["ell_col"].size // c.size for c in cases]
    assert widths[0] == 0 and cases[0].inputs["coo_val"].size > 0
    assert cases[-1].inputs["coo_val"].size == 0 and widths[-1] > 0
    assert any(c.inputs["coo_val"].size and w for c, w in zip(cases, widths))
    for c in cases:                                    # a thread per row and per COO nonzero
        assert c.blocks * c.threads >= c.size + c.inputs["coo_val"].size


@cuda.jit
def hybrid_plain_store(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y):
    t = cuda.grid(1)
    rows = y.size
    if t < rows:
        acc = float32(0.0)
        for s in range(ell_len[t]):
            acc += ell_val[s * rows + t] * x[ell_col[s * rows + t]]
        y[t] = acc
    elif t - rows < coo_val.size:
        k = t - rows
        cuda.atomic.add(y, coo_row[k], coo_val[k] * x[coo_col[k]])


@cuda.jit
def hybrid_ell_only(ell_col, ell_val, ell_len, coo_row, coo_col, coo_val, x, y):
    t = cuda.grid(1)
    rows = y.size
    if t < rows:
        acc = float32(0.0)
        for s in range(ell_len[t]):
            acc += ell_val[s * rows + t] * x[ell_col[s * rows + t]]
        cuda.atomic.add(y, t, acc)


@pytest.mark.parametrize("fn,expected", [
    (None, None),
    (hybrid_plain_store, "Make the ELL thread's update an atomic add"),
    (hybrid_ell_only, "only the ELL part was added"),
])
def test_hybrid_verdict(fn, expected):
    if fn is hybrid_plain_store and not CPU:
        pytest.skip("a race may not show on a GPU; CPU mode's detector catches it every time")
    assert_judged(ch14.spmv_hybrid, fn or ch14.reference_hybrid(), expected, hidden=False)
