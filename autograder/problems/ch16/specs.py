"""Chapter 16's graded exercises: a convolution layer's forward pass (direct, one thread per
output), the unrolling of its input for a GEMM (im2col), max pooling, the gradient with respect
to the layer's input, and the FLOPs, bytes and time bound of a layer.

A case's size is ``(N, C, P, Q, M, R, S)`` for the convolutions: N images of C channels, M filters
of R × S, and the output's P × Q, so that every drawn size is valid; the input is
``H = P + R − 1`` by ``W = Q + S − 1``. im2col's size leaves out M; pooling's is ``(N, C, P', Q', K)``
with K × K windows."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from autograder.core.checks import TINY32, gamma
from autograder.grading.problem import Baseline, Problem, Sizes, SpeedBar
from autograder.problems.ch16.references import (reference_conv_backward_input,
                                                 reference_conv_forward, reference_im2col,
                                                 reference_maxpool)
from autograder.problems.kit.baselines import njit_on_first_call
from autograder.problems.kit.formula import formula_problem
from autograder.problems.kit.inputs import cores, random_floats, random_floats_fast

U64 = 2.0 ** -53

# Block shapes (x, y): small, since the simulator pays per thread; the hidden cases use each.
BLOCK_SHAPES = ((8, 8), (16, 4), (4, 8))
VISIBLE_BLOCK = (8, 8)
SPEED_BLOCK = (32, 8)
# The speed test's layer: 32 images of 64 channels, 64 × 64, 64 filters of 3 × 3 (a VGG-like
# layer): P = Q = 62, 9.1 GFLOP; 62 columns fill 2 warps of 32 with 2 idle lanes.
SPEED_LAYER = (32, 64, 62, 62, 64, 3, 3)


# ---- shapes --------------------------------------------------------------------------------------

def layer_dims(size) -> dict:
    """Every dimension of a convolution case from its size ``(N, C, P, Q, M, R, S)``."""
    n, c, p, q, m, r, s = (int(v) for v in size)
    return {"N": n, "C": c, "H": p + r - 1, "W": q + s - 1, "M": m, "R": r, "S": s, "P": p, "Q": q}


def _layer_label(size) -> str:
    d = layer_dims(size)
    return (f"X {d['N']} × {d['C']} × {d['H']} × {d['W']} (N × C × H × W), W {d['M']} × {d['C']} × "
            f"{d['R']} × {d['S']} (M × C × R × S), Y {d['N']} × {d['M']} × {d['P']} × {d['Q']}")


def _z_blocks(x_extent, y_extent, z, block) -> tuple[int, int, int]:
    bx, by = block
    return ((x_extent + bx - 1) // bx, (y_extent + by - 1) // by, z)


# ---- the spec: float64, tolerances from the summation length -----------------------------------

def conv_forward_host(X, W) -> tuple[np.ndarray, np.ndarray]:
    """Y = X ∗ W in float64 (valid correlation, NCHW), and Σ|X · W| over each output's C·R·S
    terms."""
    X = np.asarray(X, np.float64)
    W = np.asarray(W, np.float64)
    R, S = W.shape[2:]
    win = sliding_window_view(X, (R, S), axis=(2, 3))           # [N, C, P, Q, R, S]
    y = np.tensordot(win, W, axes=([1, 4, 5], [1, 2, 3]))       # [N, P, Q, M]
    mag = np.tensordot(np.abs(win), np.abs(W), axes=([1, 4, 5], [1, 2, 3]))
    return y.transpose(0, 3, 1, 2), mag.transpose(0, 3, 1, 2)


def conv_backward_input_host(dY, W) -> tuple[np.ndarray, np.ndarray]:
    """dX[n, c, h, w] = Σ_(m, r, s) dY[n, m, h − r, w − s] · W[m, c, r, s] in float64 (terms
    outside dY are left out), and Σ of the terms' magnitudes."""
    dY = np.asarray(dY, np.float64)
    W = np.asarray(W, np.float64)
    R, S = W.shape[2:]
    padded = np.pad(dY, ((0, 0), (0, 0), (R - 1, R - 1), (S - 1, S - 1)))
    win = sliding_window_view(padded, (R, S), axis=(2, 3))       # [N, M, H, W, R, S]
    flipped = W[:, :, ::-1, ::-1]                                # window (a, b) meets W[R-1-a, S-1-b]
    dx = np.tensordot(win, flipped, axes=([1, 4, 5], [0, 2, 3]))       # [N, H, W, C]
    mag = np.tensordot(np.abs(win), np.abs(flipped), axes=([1, 4, 5], [0, 2, 3]))
    return dx.transpose(0, 3, 1, 2), mag.transpose(0, 3, 1, 2)


def layer_tolerance(mag: np.ndarray, terms: int) -> np.ndarray:
    """|error| ≤ γ_k · Σ|terms| for a float32 dot product of k terms in any order, fused
    multiply-adds or not (Higham), plus the smallest normal float32 for results near zero. The
    forward pass sums k = C·R·S terms per output, the input gradient k = M·R·S per element (fewer
    at the borders: the missing ones are zeros, which the bound allows)."""
    return gamma(int(terms)) * mag + TINY32


def im2col_host(X, R: int, S: int) -> np.ndarray:
    """The unrolled matrix Xu [C·R·S, N·P·Q]: Xu[c·R·S + r·S + s, n·P·Q + p·Q + q] =
    X[n, c, p + r, q + s]."""
    X = np.asarray(X)
    N, C = X.shape[:2]
    win = sliding_window_view(X, (int(R), int(S)), axis=(2, 3))  # [N, C, P, Q, R, S]
    P, Q = win.shape[2:4]
    return np.ascontiguousarray(win.transpose(1, 4, 5, 0, 2, 3).reshape(C * R * S, N * P * Q))


def pool_input_shape(size) -> tuple[int, int, int, int]:
    """X's shape for a pooling case ``(N, C, P', Q', K)``: each side K · P' plus up to K − 1 rows
    or columns that fill no window (pooling rounds down)."""
    n, c, ph, pw, k = (int(v) for v in size)
    return n, c, ph * k + (n + pw) % k, pw * k + (c + ph) % k


def maxpool_host(Y, K: int) -> np.ndarray:
    """The largest value of each K × K window (stride K) of Y [N, C, H, W]; rows and columns
    past the last whole window are left out."""
    Y = np.asarray(Y)
    N, C, H, W = Y.shape
    ph, pw = H // K, W // K
    return Y[:, :, :ph * K, :pw * K].reshape(N, C, ph, K, pw, K).max(axis=(3, 5))


# ---- inputs ----------------------------------------------------------------------------------------

def _activations(rng, shape) -> np.ndarray:
    """Values of both signs around a random offset and scale (kit.random_floats)."""
    return random_floats(rng, int(np.prod(shape))).reshape(shape)


def _filters(rng, shape) -> np.ndarray:
    """Filters of both signs with a random scale (10^-2 .. 10^2), none symmetric: a flipped
    filter, swapped axes or a swapped m and c all give wrong values."""
    scale = 10.0 ** rng.uniform(-2, 2)
    return (scale * rng.uniform(-1.0, 1.0, shape)).astype(np.float32)


def _forward_inputs(rng, size):
    d = layer_dims(size)
    return {"X": _activations(rng, (d["N"], d["C"], d["H"], d["W"])),
            "W": _filters(rng, (d["M"], d["C"], d["R"], d["S"]))}


def _forward_speed_inputs(rng, size):
    d = layer_dims(size)
    x = random_floats_fast(rng, d["N"] * d["C"] * d["H"] * d["W"])
    return {"X": x.reshape(d["N"], d["C"], d["H"], d["W"]),
            "W": _filters(rng, (d["M"], d["C"], d["R"], d["S"]))}


def _forward_spec(X, W, **launch):
    return {"Y": conv_forward_host(X, W)[0]}


def _forward_tolerance(inputs, expected):
    W = inputs["W"]
    _, mag = conv_forward_host(inputs["X"], W)
    return {"Y": layer_tolerance(mag, W.shape[1] * W.shape[2] * W.shape[3])}


def _forward_outputs(size):
    d = layer_dims(size)
    return {"Y": ((d["N"], d["M"], d["P"], d["Q"]), np.float32)}


def _forward_blocks(size, block):
    d = layer_dims(size)
    return _z_blocks(d["Q"], d["P"], d["N"] * d["M"], block)


def _forward_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["X"], inputs["W"], outputs["Y"])


def forward_sample(inputs, idx):
    """Y's expected values and tolerances at flat indices ``idx`` only (the speed test's samples):
    each output's C·R·S window of X against its filter, in float64."""
    X, W = inputs["X"], inputs["W"]
    M, C, R, S = W.shape
    N, _, H, Wd = X.shape
    P, Q = H - R + 1, Wd - S + 1
    n, m, p, q = np.unravel_index(np.asarray(idx, np.int64), (N, M, P, Q))
    exp = np.empty(n.size)
    mag = np.empty(n.size)
    step = 512
    for a in range(0, n.size, step):
        sl = slice(a, a + step)
        rr = p[sl, None, None] + np.arange(R)[None, :, None]
        ss = q[sl, None, None] + np.arange(S)[None, None, :]
        patch = X[n[sl, None, None, None], np.arange(C)[None, :, None, None],
                  rr[:, None], ss[:, None]].astype(np.float64)            # [k, C, R, S]
        terms = patch * W[m[sl]].astype(np.float64)
        exp[sl] = terms.sum(axis=(1, 2, 3))
        mag[sl] = np.abs(terms).sum(axis=(1, 2, 3))
    return {"Y": exp}, {"Y": layer_tolerance(mag, C * R * S)}


def layer_flops(size) -> int:
    d = layer_dims(size)
    return 2 * d["N"] * d["M"] * d["P"] * d["Q"] * d["C"] * d["R"] * d["S"]


def layer_bytes(size) -> int:
    """The least a forward pass moves: X and W read once, Y written once (float32)."""
    d = layer_dims(size)
    return 4 * (d["N"] * d["C"] * d["H"] * d["W"] + d["M"] * d["C"] * d["R"] * d["S"]
                + d["N"] * d["M"] * d["P"] * d["Q"])


# ---- CPU baselines ----------------------------------------------------------------------------------

def _numpy_forward(X, W, Y):
    """im2col as a strided view, then one BLAS product (float32, NumPy's threads)."""
    M, C, R, S = W.shape
    win = sliding_window_view(X, (R, S), axis=(2, 3))               # [N, C, P, Q, R, S], no copy
    Y[...] = np.tensordot(win, W, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)


@njit_on_first_call
def _serial_loop():
    import numba

    @numba.njit(cache=False)
    def forward(X, W, Y):
        N, M, P, Q = Y.shape
        C, R, S = W.shape[1], W.shape[2], W.shape[3]
        for n in range(N):
            for m in range(M):
                for p in range(P):
                    for q in range(Q):
                        acc = np.float32(0.0)
                        for c in range(C):
                            for r in range(R):
                                for s in range(S):
                                    acc += X[n, c, p + r, q + s] * W[m, c, r, s]
                        Y[n, m, p, q] = acc
    return forward


@njit_on_first_call
def _parallel_loop():
    import numba

    @numba.njit(parallel=True, cache=False)
    def forward(X, W, Y):
        N, M, P, Q = Y.shape
        C, R, S = W.shape[1], W.shape[2], W.shape[3]
        for nm in numba.prange(N * M):
            n, m = nm // M, nm % M
            for p in range(P):
                for q in range(Q):
                    acc = np.float32(0.0)
                    for c in range(C):
                        for r in range(R):
                            for s in range(S):
                                acc += X[n, c, p + r, q + s] * W[m, c, r, s]
                    Y[n, m, p, q] = acc
    return forward


def _serial_forward(X, W, Y):         # Baseline.run is called with keywords
    _serial_loop(X, W, Y)


def _parallel_forward(X, W, Y):
    _parallel_loop(X, W, Y)


BASELINES = {
    "numpy": Baseline(f"NumPy im2col view + tensordot (BLAS, up to {cores()} cores)",
                      _numpy_forward),
    "serial": Baseline("numba.njit seven nested loops (1 core)", _serial_forward,
                       at_speed_size=False),
    "parallel": Baseline(f"numba.njit parallel over (n, m) ({cores()} cores)", _parallel_forward),
}


# ---- 16.1 the forward pass, one thread per output -----------------------------------------------

# (N, C, P, Q, M, R, S). Visible: a 3 × 3 layer (7 × 9 outputs: partial blocks both ways), a
# 2 × 3 filter (R ≠ S, so swapped axes fail), a filter as large as the input (one output per map).
# Hidden: a 1 × 1 convolution, a deep 5 × 6 filter over 8 channels (4 times the largest visible
# size, in multiply-adds), two random shapes with every side 1 .. 4. Few threads each: the
# simulator pays per thread.
LAYER_CPU_SIZES = Sizes(visible=((2, 3, 7, 9, 4, 3, 3), (1, 2, 5, 3, 3, 2, 3), (3, 1, 1, 1, 2, 4, 4)),
                        hidden=((1, 2, 9, 13, 3, 1, 1), (2, 8, 6, 7, 3, 5, 6)),
                        hidden_random=(2, 1, 5))
LAYER_GPU_SIZES = Sizes(visible=((16, 32, 62, 62, 32, 3, 3),) + LAYER_CPU_SIZES.visible,
                        hidden=LAYER_CPU_SIZES.hidden, hidden_random=(3, 1, 12),
                        speed=SPEED_LAYER)

conv_forward = Problem(
    "conv_forward", title="A convolution layer's forward pass: one thread per output",
    spec=_forward_spec, make_inputs=_forward_inputs, outputs=_forward_outputs,
    tolerance=_forward_tolerance, launch=_forward_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=_forward_blocks,
    cpu_sizes=LAYER_CPU_SIZES, gpu_sizes=LAYER_GPU_SIZES,
    bytes_moved=layer_bytes, flops=layer_flops, baselines=BASELINES,
    reference=reference_conv_forward, speed_inputs=_forward_speed_inputs,
    sample_spec=forward_sample,
    speed_launch=lambda size: (_forward_blocks(size, SPEED_BLOCK), SPEED_BLOCK),
    # The reference is the same algorithm (one thread per output, a float32 register, the loops
    # in c, r, s order): a plain solution runs at its speed, and the bar leaves room for another
    # loop order and for the reference's spread between runs. NumPy's strided view and BLAS
    # product on the host is the baseline; on a 16-core host the direct kernel should be well
    # over 10 times faster (to be calibrated on the H200).
    speed=SpeedBar(min_fraction_of_reference=0.6, baseline="numpy", min_speedup=5.0),
    size_label=_layer_label,
    value_hint=("Y[n, m, p, q] = Σ over c < C, r < R, s < S of X[n, c, p + r, q + s] · "
                "W[m, c, r, s]: the window starts at (p, q), the filter is not flipped, r goes "
                "with rows and s with columns. The grid's z index is n · M + m (M = W.shape[0]): "
                "n = blockIdx.z // M, m = blockIdx.z % M. Wrong only in the last rows or columns? "
                "Guard with p < P and q < Q, the output's sizes, not the input's."),
)


# ---- 16.2 im2col: the input unrolled for a GEMM -----------------------------------------------------

def im2col_dims(size) -> dict:
    n, c, p, q, r, s = (int(v) for v in size)
    return {"N": n, "C": c, "P": p, "Q": q, "R": r, "S": s, "H": p + r - 1, "W": q + s - 1,
            "rows": c * r * s, "cols": n * p * q}


def _im2col_label(size) -> str:
    d = im2col_dims(size)
    return (f"X {d['N']} × {d['C']} × {d['H']} × {d['W']} (N × C × H × W), a {d['R']} × {d['S']} "
            f"filter: Xu {d['rows']} × {d['cols']} (C·R·S × N·P·Q)")


def _im2col_inputs(rng, size):
    d = im2col_dims(size)
    return {"X": _activations(rng, (d["N"], d["C"], d["H"], d["W"])), "R": d["R"], "S": d["S"]}


def _im2col_spec(X, R, S, **launch):
    return {"Xu": im2col_host(X, R, S)}


def _exact(inputs, expected):
    return {k: 0.0 for k in expected}         # a copy, or a value chosen among the inputs


def _im2col_outputs(size):
    d = im2col_dims(size)
    return {"Xu": ((d["rows"], d["cols"]), np.float32)}


def _im2col_blocks(size, block):
    d = im2col_dims(size)
    bx, by = block
    return ((d["cols"] + bx - 1) // bx, (d["rows"] + by - 1) // by)


def _im2col_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["X"], outputs["Xu"], int(inputs["R"]),
                                      int(inputs["S"]))


# (N, C, P, Q, R, S). Visible: Xu 12 × 40 (a 3 × 2 filter: R ≠ S), 12 × 9, and 1 × 1. Hidden: a
# 3 × 3 filter over 3 channels and 2 images (Xu 27 × 72, 4 times the largest visible), a 1 × 4
# filter, two random shapes.
im2col = Problem(
    "im2col", title="im2col: the convolution's input unrolled into a matrix for a GEMM",
    spec=_im2col_spec, make_inputs=_im2col_inputs, outputs=_im2col_outputs, tolerance=_exact,
    launch=_im2col_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_im2col_blocks, reference=reference_im2col,
    cpu_sizes=Sizes(visible=((2, 2, 4, 5, 3, 2), (1, 3, 3, 3, 2, 2), (1, 1, 1, 1, 1, 1)),
                    hidden=((2, 3, 6, 6, 3, 3), (3, 1, 2, 5, 1, 4)), hidden_random=(2, 1, 5)),
    gpu_sizes=Sizes(visible=((16, 32, 62, 62, 3, 3), (2, 2, 4, 5, 3, 2), (1, 3, 3, 3, 2, 2),
                             (1, 1, 1, 1, 1, 1)),
                    hidden=((2, 3, 6, 6, 3, 3), (3, 1, 2, 5, 1, 4)), hidden_random=(3, 1, 12)),
    size_label=_im2col_label,
    value_hint=("Xu[row, col] = X[n, c, p + r, q + s] with row = c·R·S + r·S + s and col = "
                "n·P·Q + p·Q + q, so c = row // (R·S), r = (row // S) % R, s = row % S, n = "
                "col // (P·Q), p = (col // Q) % P, q = col % Q, where P = H − R + 1 and Q = "
                "W − S + 1. Every element of Xu is a copy: the check wants it exactly."),
)


# ---- 16.3 max pooling -----------------------------------------------------------------------------

def _pool_label(size) -> str:
    n, c, h, w = pool_input_shape(size)
    k = int(size[4])
    return (f"Y {n} × {c} × {h} × {w} (N × C × H × W), {k} × {k} windows: out {n} × {c} × "
            f"{h // k} × {w // k}")


def _pool_inputs(rng, size):
    shape = pool_input_shape(size)
    y = _activations(rng, shape)
    # Channel 0 entirely below zero: a maximum that starts from 0 is wrong there.
    y[:, 0] = -np.abs(y[:, 0]) - np.float32(abs(float(y.flat[0])) + 1.0)
    return {"Y": y, "K": int(size[4])}


def _pool_spec(Y, K, **launch):
    return {"out": maxpool_host(Y, K)}


def _pool_outputs(size):
    n, c, ph, pw, _ = (int(v) for v in size)
    return {"out": ((n, c, ph, pw), np.float32)}


def _pool_blocks(size, block):
    n, c, ph, pw, _ = (int(v) for v in size)
    return _z_blocks(pw, ph, n * c, block)


def _pool_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["Y"], outputs["out"], int(inputs["K"]))


def _pool_must_read(case):
    """Rows and columns past the last whole window feed no output: they need not be read."""
    y = case.inputs["Y"]
    k = int(case.inputs["K"])
    needed = np.zeros(y.shape, bool)
    needed[:, :, :(y.shape[2] // k) * k, :(y.shape[3] // k) * k] = True
    return {"Y": needed}


maxpool = Problem(
    "maxpool", title="Max pooling: the largest value of each K × K window",
    spec=_pool_spec, make_inputs=_pool_inputs, outputs=_pool_outputs, tolerance=_exact,
    launch=_pool_launch, block_sizes=BLOCK_SHAPES, visible_block_size=VISIBLE_BLOCK,
    blocks_for=_pool_blocks, must_read=_pool_must_read, reference=reference_maxpool,
    # (N, C, P', Q', K). Visible: 2 × 2 windows over 10 × 13 (a column left over), 3 × 3 over
    # 9 × 13 (a column left over), one 4 × 4 window (rows and columns left over). Hidden: 3 × 3
    # windows over 3 × 4 maps of 6 × 7 outputs (4 times the largest visible), K = 1, two random.
    cpu_sizes=Sizes(visible=((2, 3, 5, 6, 2), (1, 2, 3, 4, 3), (2, 1, 1, 1, 4)),
                    hidden=((3, 4, 6, 7, 3), (1, 2, 5, 3, 1)), hidden_random=(2, 1, 5)),
    gpu_sizes=Sizes(visible=((32, 64, 31, 31, 2), (2, 3, 5, 6, 2), (1, 2, 3, 4, 3),
                             (2, 1, 1, 1, 4)),
                    hidden=((3, 4, 6, 7, 3), (1, 2, 5, 3, 1)), hidden_random=(3, 1, 20)),
    size_label=_pool_label,
    value_hint=("out[n, c, i, j] is the largest Y[n, c, i·K + a, j·K + b] over a, b < K, and "
                "the values may all be negative: start from the window's first value, not from "
                "0. Windows do not overlap (stride K), and rows or columns past the last whole "
                "window are left out."),
)


# ---- 16.4 the gradient with respect to the input -----------------------------------------------------

def _backward_inputs(rng, size):
    d = layer_dims(size)
    return {"dY": _activations(rng, (d["N"], d["M"], d["P"], d["Q"])),
            "W": _filters(rng, (d["M"], d["C"], d["R"], d["S"]))}


def _backward_spec(dY, W, **launch):
    return {"dX": conv_backward_input_host(dY, W)[0]}


def _backward_tolerance(inputs, expected):
    W = inputs["W"]
    _, mag = conv_backward_input_host(inputs["dY"], W)
    return {"dX": layer_tolerance(mag, W.shape[0] * W.shape[2] * W.shape[3])}


def _backward_outputs(size):
    d = layer_dims(size)
    return {"dX": ((d["N"], d["C"], d["H"], d["W"]), np.float32)}


def _backward_blocks(size, block):
    d = layer_dims(size)
    return _z_blocks(d["W"], d["H"], d["N"] * d["C"], block)


def _backward_launch(kernel, inputs, outputs, case):
    kernel[case.blocks, case.threads](inputs["dY"], inputs["W"], outputs["dX"])


conv_backward_input = Problem(
    "conv_backward_input",
    title="The gradient with respect to the layer's input: one thread per element of dX",
    spec=_backward_spec, make_inputs=_backward_inputs, outputs=_backward_outputs,
    tolerance=_backward_tolerance, launch=_backward_launch, block_sizes=BLOCK_SHAPES,
    visible_block_size=VISIBLE_BLOCK, blocks_for=_backward_blocks,
    reference=reference_conv_backward_input,
    # As 16.1, but the hidden deep case sums over many filters (M = 10 of 5 × 6) into 2 channels:
    # the gradient's sum runs over m, r, s.
    cpu_sizes=Sizes(visible=LAYER_CPU_SIZES.visible,
                    hidden=((1, 2, 9, 13, 3, 1, 1), (2, 2, 7, 7, 10, 5, 6)),
                    hidden_random=(2, 1, 5)),
    gpu_sizes=Sizes(visible=((16, 32, 62, 62, 32, 3, 3),) + LAYER_CPU_SIZES.visible,
                    hidden=((1, 2, 9, 13, 3, 1, 1), (2, 2, 7, 7, 10, 5, 6)),
                    hidden_random=(3, 1, 12)),
    size_label=lambda size: _layer_label(size).replace("Y ", "dY ").replace("X ", "dX ", 1),
    value_hint=("dX[n, c, h, w] = Σ over m < M, r < R, s < S of dY[n, m, h − r, w − s] · "
                "W[m, c, r, s], leaving out the terms whose h − r or w − s falls outside dY "
                "(0 ≤ h − r < P, 0 ≤ w − s < Q; a negative index would wrap around to the other "
                "end). The sum runs over the filters m, not the channels, and the grid's z index "
                "is n · C + c with C = W.shape[1]. Wrong only near the borders? Look at those "
                "two tests."),
)


# ---- 16.5 predict: FLOPs, bytes, and the time bound of a layer --------------------------------------

def _bound_spec(n, c, h, w, m, r, s, peak_flops, bandwidth):
    p, q = h - r + 1, w - s + 1
    flops = 2.0 * n * m * p * q * c * r * s
    least = 4.0 * (n * c * h * w + m * c * r * s + n * m * p * q)
    unrolled = least + 8.0 * (c * r * s) * (n * p * q)
    return {"flops": flops, "bytes": least, "im2col_bytes": unrolled,
            "seconds": np.maximum(flops / peak_flops, least / bandwidth)}


def _bound_inputs(rng, count):
    r = rng.integers(1, 8, count).astype(np.float64)
    s = rng.integers(1, 8, count).astype(np.float64)
    h = r + rng.integers(0, 256, count)
    w = s + rng.integers(0, 256, count)
    n = rng.integers(1, 129, count).astype(np.float64)
    c = rng.integers(1, 513, count).astype(np.float64)
    m = rng.integers(1, 513, count).astype(np.float64)
    peak = 10.0 ** rng.uniform(11, 14.5, count)            # 0.1 to 300 TFLOP/s
    bandwidth = 10.0 ** rng.uniform(10.5, 13, count)       # 30 GB/s to 10 TB/s
    # The first cases: the notebook's layers on the chapter's H200-like device (67 TFLOP/s,
    # 4.8 TB/s): the speed test's 3 × 3 layer; a 1 × 1 layer of one image (memory bound); then
    # a one-pixel layer.
    first = np.array([[32, 64, 64, 64, 64, 3, 3], [1, 64, 56, 56, 64, 1, 1], [1, 1, 1, 1, 1, 1, 1]],
                     np.float64)
    k = min(count, len(first))
    n[:k], c[:k], h[:k], w[:k], m[:k], r[:k], s[:k] = first[:k].T
    peak[:k], bandwidth[:k] = 67e12, 4.8e12
    return {"n": n, "c": c, "h": h, "w": w, "m": m, "r": r, "s": s, "peak_flops": peak,
            "bandwidth": bandwidth}


def _bound_tolerance(inputs, expected):
    # A handful of float64 roundings in any order of evaluation: 64 u relative is generous.
    return {k: 64 * U64 * np.abs(v) for k, v in expected.items()}


conv_layer_bound = formula_problem(
    "conv_layer_bound", title="Predict: a convolution layer's FLOPs, bytes and time bound",
    function="conv_layer_bound",
    args=(("n", int), ("c", int), ("h", int), ("w", int), ("m", int), ("r", int), ("s", int),
          ("peak_flops", float), ("bandwidth", float)),
    results=("flops", "bytes", "im2col_bytes", "seconds"), spec=_bound_spec,
    make_inputs=_bound_inputs, tolerance=_bound_tolerance,
    sizes=Sizes(visible=(3,), hidden=(200,)),
    value_hint=("flops: a multiply and an add for each of the C·R·S terms of each of the N·M·P·Q "
                "outputs. bytes: the least any forward pass moves, 4 bytes for each element of "
                "X, W and Y, each once. im2col_bytes: that, plus the unrolled matrix written "
                "once by the unroll kernel and read once by the GEMM. seconds: the larger of the "
                "FLOPs at the peak rate and the least bytes at the bandwidth."),
)
