"""Chapter 16: do the convolution layer's checks pass correct kernels written several ways (the
filter in shared memory, a float64 accumulator, other loop orders) and fail the classic bugs (a
flipped filter, n and m swapped, a guard on the input's size, a missing barrier, a maximum that
starts from 0, an input gradient that never leaves dY or sums over the channels) with a verdict
that says what is wrong? Are the float64 specs right (against a plain loop), is the tolerance the
error bound of a float32 dot product of C·R·S (forward) or M·R·S (input gradient) terms, does
the speed test's sample agree with the whole spec, and does im2col + the course's GEMM give the
forward pass?"""

import numpy as np
import pytest
from numba import cuda, float32

import autograder as ag

from ptx import assert_compiles_for_h200
from verdicts import assert_judged, verdict_text

ch16 = ag.problems.ch16
CPU = not ag.backend.is_gpu


# ---- the specs ---------------------------------------------------------------------------------------

def _loops(X, W):
    N, C, H, Wd = X.shape
    M, _, R, S = W.shape
    Y = np.zeros((N, M, H - R + 1, Wd - S + 1))
    for n, m, p, q in np.ndindex(*Y.shape):
        Y[n, m, p, q] = np.sum(X[n, :, p:p + R, q:q + S].astype(np.float64) * W[m])
    return Y


def test_specs_agree_with_plain_loops():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    W = rng.standard_normal((4, 3, 2, 3)).astype(np.float32)
    Y, mag = ch16.conv_forward_host(X, W)
    assert np.allclose(Y, _loops(X, W), rtol=1e-12, atol=1e-12)
    assert np.allclose(mag, _loops(np.abs(X), np.abs(W)), rtol=1e-12)
    # The input gradient is the adjoint of the forward pass: <dY, conv(X)> = <conv_back(dY), X>.
    dY = rng.standard_normal(Y.shape)
    dX, _ = ch16.conv_backward_input_host(dY, W)
    assert dX.shape == X.shape
    assert np.isclose(np.sum(dY * Y), np.sum(dX * X), rtol=1e-10)
    # im2col: the filters as [M, C·R·S] times Xu give Y with n and m swapped.
    Xu = ch16.im2col_host(X, 2, 3)
    assert Xu.shape == ch16.unrolled_shape(2, 3, 6, 7, 2, 3)
    prod = W.reshape(4, -1).astype(np.float64) @ Xu
    assert np.allclose(prod.reshape(4, 2, 5, 5).transpose(1, 0, 2, 3), Y, rtol=1e-12, atol=1e-12)
    pooled = ch16.maxpool_host(X, 2)
    assert pooled.shape == (2, 3, 3, 3) and pooled[1, 2, 2, 1] == X[1, 2, 4:6, 2:4].max()


def test_the_tolerance_is_the_bound_of_a_float32_dot_product():
    """The worst float32 order of each output's C·R·S terms passes; one term left out fails."""
    case = ch16.conv_forward.cases()[0]
    expected, tol = ch16.conv_forward.reference_values(case)
    X, W = case.inputs["X"], case.inputs["W"]
    N, M, P, Q = expected["Y"].shape
    worst = np.zeros(expected["Y"].shape, np.float32)
    short = np.zeros(expected["Y"].shape)
    for n, m, p, q in np.ndindex(N, M, P, Q):
        terms = (X[n, :, p:p + W.shape[2], q:q + W.shape[3]] * W[m]).astype(np.float32).ravel()
        acc = np.float32(0)
        for t in sorted(terms, key=abs):
            acc = np.float32(acc + t)
        worst[n, m, p, q] = acc
        short[n, m, p, q] = float(acc) - float(terms[0])
    assert np.all(np.abs(worst - expected["Y"]) <= tol["Y"])
    assert np.any(np.abs(short - expected["Y"]) > tol["Y"])
    # The input gradient's bound is γ_(M·R·S): larger where more filters are summed.
    bcase = ch16.conv_backward_input.cases()[0]
    _, btol = ch16.conv_backward_input.reference_values(bcase)
    M, C, R, S = bcase.inputs["W"].shape
    _, bmag = ch16.conv_backward_input_host(bcase.inputs["dY"], bcase.inputs["W"])
    assert np.allclose(btol["dX"], ch16.layer_tolerance(bmag, M * R * S))


def test_the_speed_sample_agrees_with_the_whole_spec():
    rng = np.random.default_rng(4)
    layer = {"X": rng.standard_normal((2, 3, 8, 9)).astype(np.float32),
             "W": rng.standard_normal((5, 3, 3, 2)).astype(np.float32)}
    Y, mag = ch16.conv_forward_host(layer["X"], layer["W"])
    idx = np.array([0, 7, 100, Y.size - 1])
    expected, tol = ch16.forward_sample(layer, idx)
    assert np.allclose(expected["Y"], Y.reshape(-1)[idx], rtol=1e-12, atol=0)
    assert np.allclose(tol["Y"], ch16.layer_tolerance(mag.reshape(-1)[idx], 18))


# ---- 16.1 forward --------------------------------------------------------------------------------

def _forward(flip=False, swap_nm=False, guard_input=False, m_from_channels=False):
    """One thread per output: right with the defaults, else with one classic bug."""
    @cuda.jit
    def kernel(X, W, Y):
        q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        M, C, R, S = W.shape
        if swap_nm:                    # another one-to-one map of z to (n, m): also right
            n, m = cuda.blockIdx.z % Y.shape[0], cuda.blockIdx.z // Y.shape[0]
        elif m_from_channels:
            n, m = cuda.blockIdx.z // C, cuda.blockIdx.z % C
        else:
            n, m = cuda.blockIdx.z // M, cuda.blockIdx.z % M
        limit_p, limit_q = (X.shape[2], X.shape[3]) if guard_input else (Y.shape[2], Y.shape[3])
        if p < limit_p and q < limit_q:
            acc = float32(0.0)
            for c in range(C):
                for r in range(R):
                    for s in range(S):
                        w = W[m, c, R - 1 - r, S - 1 - s] if flip else W[m, c, r, s]
                        acc += X[n, c, p + r, q + s] * w
            Y[n, m, p, q] = acc
    return kernel


FILTER_MAX = 256


@cuda.jit
def forward_shared_filter(X, W, Y):
    # Every thread of a block works for the same (n, m): the block loads W[m] into shared memory
    # once, then each thread reads its taps from there.
    w_s = cuda.shared.array(FILTER_MAX, float32)
    M, C, R, S = W.shape
    m = cuda.blockIdx.z % M
    n = cuda.blockIdx.z // M
    t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    for k in range(t, C * R * S, cuda.blockDim.x * cuda.blockDim.y):
        w_s[k] = W[m, k // (R * S), (k // S) % R, k % S]
    cuda.syncthreads()
    q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if p < Y.shape[2] and q < Y.shape[3]:
        acc = 0.0
        for k in range(C * R * S):
            acc += X[n, k // (R * S), p + (k // S) % R, q + k % S] * w_s[k]
        Y[n, m, p, q] = acc


@cuda.jit
def forward_shared_no_barrier(X, W, Y):
    w_s = cuda.shared.array(FILTER_MAX, float32)
    M, C, R, S = W.shape
    m = cuda.blockIdx.z % M
    n = cuda.blockIdx.z // M
    t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    for k in range(t, C * R * S, cuda.blockDim.x * cuda.blockDim.y):
        w_s[k] = W[m, k // (R * S), (k // S) % R, k % S]
    q = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    p = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if p < Y.shape[2] and q < Y.shape[3]:
        acc = float32(0.0)
        for k in range(C * R * S):
            acc += X[n, k // (R * S), p + (k // S) % R, q + k % S] * w_s[k]
        Y[n, m, p, q] = acc


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _forward(), None),
    ("shared_filter", forward_shared_filter, None),
    ("flipped", _forward(flip=True), "the filter is not flipped"),
    ("n_m_other_order", _forward(swap_nm=True), None),
    ("m_from_channels", _forward(m_from_channels=True), "out of bounds"),
    ("guard_on_input", _forward(guard_input=True), "IndexError"),
    ("no_barrier", forward_shared_no_barrier, "race"),
])
def test_forward_verdict(name, fn, expected):
    if name == "no_barrier" and not CPU:
        pytest.skip("a shared-memory race may not show on a GPU; CPU mode's detector catches it")
    assert_judged(ch16.conv_forward, fn, expected)


def test_forward_host_copy_is_caught():
    class HostConv:
        def __getitem__(self, launch):
            def run(X, W, Y):
                Y.copy_to_device(ch16.conv_forward_host(X.copy_to_host(), W.copy_to_host())[0]
                                 .astype(np.float32))
            return run
    failure = verdict_text(ch16.conv_forward, HostConv(), hidden=False)
    assert failure is not None and "host" in failure, failure


# ---- 16.2 im2col -----------------------------------------------------------------------------------

@cuda.jit
def im2col_ok(X, Xu, R, S):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < Xu.shape[0] and col < Xu.shape[1]:
        P, Q = X.shape[2] - R + 1, X.shape[3] - S + 1
        c, r, s = row // (R * S), (row // S) % R, row % S
        n, p, q = col // (P * Q), (col // Q) % P, col % Q
        Xu[row, col] = X[n, c, p + r, q + s]


@cuda.jit
def im2col_thread_per_window(X, Xu, R, S):
    # One thread per column (an output position) writes its whole column; other threads idle.
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.blockIdx.y == 0 and cuda.threadIdx.y == 0 and col < Xu.shape[1]:
        P, Q = X.shape[2] - R + 1, X.shape[3] - S + 1
        n, p, q = col // (P * Q), (col // Q) % P, col % Q
        row = 0
        for c in range(X.shape[1]):
            for r in range(R):
                for s in range(S):
                    Xu[row, col] = X[n, c, p + r, q + s]
                    row += 1


@cuda.jit
def im2col_r_s_swapped(X, Xu, R, S):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < Xu.shape[0] and col < Xu.shape[1]:
        P, Q = X.shape[2] - R + 1, X.shape[3] - S + 1
        c, s, r = row // (R * S), (row // R) % S, row % R        # row = c·R·S + s·R + r: wrong
        n, p, q = col // (P * Q), (col // Q) % P, col % Q
        Xu[row, col] = X[n, c, p + r, q + s]


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", im2col_ok, None),
    ("thread_per_window", im2col_thread_per_window, None),
    ("r_s_swapped", im2col_r_s_swapped, "row = c·R·S + r·S + s"),
])
def test_im2col_verdict(name, fn, expected):
    assert_judged(ch16.im2col, fn, expected)


def test_im2col_and_the_course_gemm_give_the_forward_pass():
    m = ch16.small_layer()
    Y = ch16.conv_by_im2col(im2col_ok, cuda.to_device(m["X"]), cuda.to_device(m["W"]))
    assert np.array_equal(Y.copy_to_host(), m["Y"].astype(np.float32))


# ---- 16.3 max pooling ------------------------------------------------------------------------------

def _pool(start_at_zero=False, overlap=False):
    @cuda.jit
    def kernel(Y, out, K):
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        n, c = cuda.blockIdx.z // out.shape[1], cuda.blockIdx.z % out.shape[1]
        if i < out.shape[2] and j < out.shape[3]:
            base_i, base_j = (i, j) if overlap else (i * K, j * K)
            best = float32(0.0) if start_at_zero else Y[n, c, base_i, base_j]
            for a in range(K):
                for b in range(K):
                    best = max(best, Y[n, c, base_i + a, base_j + b])
            out[n, c, i, j] = best
    return kernel


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _pool(), None),
    ("starts_at_zero", _pool(start_at_zero=True), "not from 0"),
    ("stride_one", _pool(overlap=True), "stride K"),
])
def test_maxpool_verdict(name, fn, expected):
    assert_judged(ch16.maxpool, fn, expected)


# ---- 16.4 the input gradient -------------------------------------------------------------------------

def _backward(plus=False, no_bounds=False, over_channels=False):
    @cuda.jit
    def kernel(dY, W, dX):
        w = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        h = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        M, C, R, S = W.shape
        n, c = cuda.blockIdx.z // C, cuda.blockIdx.z % C
        P, Q = dY.shape[2], dY.shape[3]
        if h < dX.shape[2] and w < dX.shape[3]:
            acc = float32(0.0)
            for m in range(C if over_channels else M):
                for r in range(R):
                    for s in range(S):
                        p, q = (h + r, w + s) if plus else (h - r, w - s)
                        if no_bounds or (0 <= p < P and 0 <= q < Q):
                            if p < P and q < Q:           # kept in bounds on the high side only
                                acc += dY[n, m % M, p, q] * W[m % M, c, r, s]
            dX[n, c, h, w] = acc
    return kernel


@cuda.jit
def backward_gather_by_output(dY, W, dX):
    # The same sum, organised by the outputs a pixel fed: p from max(0, h − R + 1) to min(h, P − 1).
    w = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    h = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, C, R, S = W.shape
    n, c = cuda.blockIdx.z // C, cuda.blockIdx.z % C
    if h < dX.shape[2] and w < dX.shape[3]:
        acc = 0.0
        for p in range(max(0, h - R + 1), min(h, dY.shape[2] - 1) + 1):
            for q in range(max(0, w - S + 1), min(w, dY.shape[3] - 1) + 1):
                for m in range(M):
                    acc += dY[n, m, p, q] * W[m, c, h - p, w - q]
        dX[n, c, h, w] = acc


@pytest.mark.parametrize("name,fn,expected", [
    ("ok", _backward(), None),
    ("gather_by_output", backward_gather_by_output, None),
    ("h_plus_r", _backward(plus=True), "dY[n, m, h − r, w − s]"),
    ("negative_indices_wrap", _backward(no_bounds=True), "wrap around"),
    ("over_channels", _backward(over_channels=True), "over the filters m"),
])
def test_backward_verdict(name, fn, expected):
    assert_judged(ch16.conv_backward_input, fn, expected)


# ---- 16.5 the bound ---------------------------------------------------------------------------------

def _bound_ok(n, c, h, w, m, r, s, peak_flops, bandwidth):
    p, q = h - r + 1, w - s + 1
    flops = 2 * n * m * p * q * c * r * s
    least = 4 * (n * c * h * w + m * c * r * s + n * m * p * q)
    return flops, least, least + 8 * c * r * s * n * p * q, max(flops / peak_flops,
                                                                least / bandwidth)


def _bound_input_sized(n, c, h, w, m, r, s, peak_flops, bandwidth):
    flops = 2 * n * m * h * w * c * r * s                     # outputs counted as H × W: wrong
    least = 4 * (n * c * h * w + m * c * r * s + n * m * h * w)
    return flops, least, least + 8 * c * r * s * n * h * w, max(flops / peak_flops,
                                                                least / bandwidth)


@pytest.mark.parametrize("fn,expected", [(_bound_ok, None), (_bound_input_sized, "flops")])
def test_bound_verdict(fn, expected):
    assert_judged(ch16.conv_layer_bound, fn, expected)


# ---- the course's kernels, the notebook's helpers -----------------------------------------------------

def test_course_kernels_pass_and_the_small_layer_runs():
    for problem in ch16.PROBLEMS[:4]:
        assert verdict_text(problem, problem.reference_kernel(), hidden=False) is None
    for which, kernel in (("forward", ch16.reference_conv_forward()), ("im2col", im2col_ok),
                          ("maxpool", _pool()), ("backward", _backward())):
        got, expected = ch16.check_small(kernel, which)
        assert np.allclose(got, expected, rtol=1e-6, atol=1e-6), which


def test_the_picture_and_the_cpu_baselines():
    import matplotlib
    matplotlib.use("Agg")
    ax = ch16.show_im2col()
    assert len(ax[1].texts) == 8 * 6                       # Xu is 2·2·2 × 2·3, every value shown
    rows = ch16.time_cpu_forward((2, 3, 9, 10, 4, 3, 3))
    assert len(rows) == 3 and all(r["right"] and r["ms"] > 0 for r in rows), rows
    if CPU:
        with pytest.raises(ag.timing.NeedsGPU):
            ch16.measure()


@pytest.mark.skipif(not CPU, reason="compile_ptx of the simulator's kernels: CPU mode only")
def test_every_course_kernel_compiles_for_an_h200():
    """Every course kernel of the chapter compiles for compute capability 9.0."""
    assert_compiles_for_h200("ch16", (
        "r.cuda, r.float32 = cuda, numba.float32\n"
        "f4 = types.float32[:, :, :, ::1]; f2 = types.float32[:, ::1]; i = types.int64\n"
        "k = r._layer_kernels.__wrapped__()\n"
        "sigs = [(k['forward'], (f4, f4, f4)), (k['im2col'], (f4, f2, i, i)),\n"
        "        (k['maxpool'], (f4, f4, i)), (k['backward'], (f4, f4, f4)),\n"
        "        (r._reorder.__wrapped__(), (types.float32[:, :, :, :], f4))]\n"), 5)


def test_the_measuring_cell_runs_every_way_and_checks_each_result(monkeypatch):
    """The GPU measuring cell's launches, run once each in the simulator on a small layer (its
    timer replaced by one call): every way computes Y (checked), and a kernel of the wrong kind
    is refused with a sentence."""
    from autograder.machine import timing

    def once(label, launch, repeats=0, nbytes=0, flops=0, **kw):
        launch(0)
        return timing.Stats(label, 1.0, 1, bytes=nbytes, flops=flops)
    monkeypatch.setattr(timing, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(timing, "time_gpu", once)
    rows = ch16.measure({"mine": ("direct", _forward()), "mine unrolled": ("im2col", im2col_ok)},
                        size=(2, 3, 5, 6, 4, 3, 2), repeats=1)
    assert len(rows) == 4 and all(r["right"] for r in rows), rows
    rows = ch16.measure({"flipped": ("direct", _forward(flip=True))}, size=(1, 2, 4, 5, 3, 3, 3))
    assert [r["right"] for r in rows] == [True, True, False]
    with pytest.raises(ValueError, match="'direct' or 'im2col'"):
        ch16.measure({"x": ("gemm", im2col_ok)}, size=(1, 1, 2, 2, 1, 1, 1))
