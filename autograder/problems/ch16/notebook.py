"""What chapter 16's notebook calls outside the graded cells: a small layer to try kernels on, a
picture of the unrolled matrix, the CPU baselines timed, and the "measure it" cell (the direct
kernel, im2col + the course's GEMM, and cuDNN through PyTorch where it is installed, on a GPU)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch16.references import (conv_by_im2col, im2col_scratch,
                                                 reference_conv_forward, reference_im2col)
from autograder.problems.ch16.specs import (BASELINES, SPEED_BLOCK, SPEED_LAYER,
                                            conv_backward_input_host, conv_forward_host,
                                            forward_sample, im2col_host, layer_bytes,
                                            layer_dims, layer_flops, maxpool_host)


# ---- a small layer, and the picture of im2col -----------------------------------------------------

def small_layer() -> dict:
    """One image of 2 channels, 4 × 5, and 3 filters of 2 × 2 with small integer values (every
    sum is exact in float32): X, W, and Y = X ∗ W."""
    X = np.arange(2 * 4 * 5, dtype=np.float32).reshape(1, 2, 4, 5)
    W = np.array([[[[1, 0], [0, -1]], [[0, 1], [1, 0]]],
                  [[[2, 1], [0, 0]], [[0, 0], [-1, 1]]],
                  [[[0, 0], [0, 1]], [[1, -2], [0, 0]]]], np.float32)
    return {"X": X, "W": W, "Y": np.ascontiguousarray(conv_forward_host(X, W)[0])}


def show_im2col(N: int = 1, C: int = 2, H: int = 3, W: int = 4, R: int = 2, S: int = 2, ax=None):
    """X (each element numbered, its channel in colour) beside its unrolled matrix Xu: column
    ``n·P·Q + p·Q + q`` of Xu is the window of output (p, q), every channel's R × S patch one under
    the other; a value of X appears in Xu up to R·S times."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    X = np.arange(N * C * H * W, dtype=np.float32).reshape(N, C, H, W)
    Xu = im2col_host(X, R, S)
    colours = ListedColormap(["#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc"])
    if ax is None:
        _, ax = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [1, 2.2]})
    # Left: the channels of image 0 side by side.
    chan = np.concatenate([np.full((H, W), c % 4) for c in range(C)], axis=1)
    shown = np.concatenate([X[0, c] for c in range(C)], axis=1)
    ax[0].imshow(chan, cmap=colours, vmin=0, vmax=3)
    for (i, j), v in np.ndenumerate(shown):
        ax[0].text(j, i, f"{int(v)}", ha="center", va="center", fontsize=9)
    ax[0].set_title(f"X[0]: {C} channels of {H} × {W}, side by side", fontsize=9)
    ax[0].set_xticks([])
    ax[0].set_yticks([])
    # Right: Xu, each row coloured by the channel it comes from.
    rows_channel = np.repeat(np.arange(C) % 4, R * S)[:, None] * np.ones((1, Xu.shape[1]))
    ax[1].imshow(rows_channel, cmap=colours, vmin=0, vmax=3, aspect="auto")
    for (i, j), v in np.ndenumerate(Xu):
        ax[1].text(j, i, f"{int(v)}", ha="center", va="center", fontsize=8)
    ax[1].set_title(f"Xu: {Xu.shape[0]} rows (c, r, s) × {Xu.shape[1]} columns (n, p, q)",
                    fontsize=9)
    ax[1].set_yticks(range(Xu.shape[0]))
    ax[1].set_yticklabels([f"c{c} r{r} s{s}" for c in range(C) for r in range(R)
                           for s in range(S)], fontsize=7)
    P, Q = H - R + 1, W - S + 1
    ax[1].set_xticks(range(Xu.shape[1]))
    ax[1].set_xticklabels([f"p{p}q{q}" for _ in range(N) for p in range(P) for q in range(Q)],
                          fontsize=7, rotation=90)
    return ax


def check_small(kernel, which: str) -> tuple[np.ndarray, np.ndarray]:
    """Run a learner's kernel on :func:`small_layer` (``which``: ``"forward"``, ``"im2col"``,
    ``"maxpool"`` or ``"backward"``), blocks of 8 × 8 threads; return (what it stored, the
    float64 answer)."""
    from numba import cuda
    m = small_layer()
    X, W = m["X"], m["W"]
    N, C, H, Wd = X.shape
    M, _, R, S = W.shape
    P, Q = H - R + 1, Wd - S + 1

    def grid(x, y, z=None):
        g = ((x + 7) // 8, (y + 7) // 8)
        return g if z is None else g + (z,)
    if which == "forward":
        out = cuda.device_array((N, M, P, Q), np.float32)
        kernel[grid(Q, P, N * M), (8, 8)](cuda.to_device(X), cuda.to_device(W), out)
        expected = m["Y"]
    elif which == "im2col":
        expected = im2col_host(X, R, S)
        out = cuda.device_array(expected.shape, np.float32)
        kernel[grid(expected.shape[1], expected.shape[0]), (8, 8)](cuda.to_device(X), out, R, S)
    elif which == "maxpool":
        expected = maxpool_host(X, 2)
        out = cuda.device_array(expected.shape, np.float32)
        kernel[grid(expected.shape[3], expected.shape[2], N * C), (8, 8)](cuda.to_device(X),
                                                                          out, 2)
    elif which == "backward":
        dY = np.ascontiguousarray(m["Y"], np.float32) / np.float32(16)
        expected = conv_backward_input_host(dY, W)[0]
        out = cuda.device_array(X.shape, np.float32)
        kernel[grid(Wd, H, N * C), (8, 8)](cuda.to_device(dY), cuda.to_device(W), out)
    else:
        raise ValueError(f"which is 'forward', 'im2col', 'maxpool' or 'backward', not {which!r}")
    return out.copy_to_host(), expected


# ---- timing -------------------------------------------------------------------------------------

def _layer(rng, size) -> dict:
    d = layer_dims(size)
    return {"X": rng.standard_normal((d["N"], d["C"], d["H"], d["W"]), dtype=np.float32),
            "W": rng.standard_normal((d["M"], d["C"], d["R"], d["S"]), dtype=np.float32)}


def _sample_right(got: np.ndarray, layer: dict, seed: int = 1) -> bool:
    idx = np.random.default_rng(seed).choice(got.size, size=min(2048, got.size), replace=False)
    expected, tol = forward_sample(layer, idx)
    return bool(np.all(np.abs(got.reshape(-1)[idx] - expected["Y"]) <= tol["Y"]))


def time_cpu_forward(size=(8, 16, 30, 30, 16, 3, 3), seed: int = 16) -> list[dict]:
    """The CPU baselines on a layer of ``size`` (N, C, P, Q, M, R, S): label, ms, GFLOP/s,
    right (bool: Y checked at sampled outputs). The one-core loop only on layers of at most
    10^9 FLOPs (it runs at about a GFLOP/s)."""
    from autograder.machine import timing
    layer = _layer(np.random.default_rng(seed), size)
    d = layer_dims(size)
    Y = np.empty((d["N"], d["M"], d["P"], d["Q"]), np.float32)
    out = []
    for key, base in BASELINES.items():
        if key == "serial" and layer_flops(size) > 1e9:
            continue
        Y[:] = np.nan
        stats = timing.time_cpu(base.label, lambda: base.run(Y=Y, **layer), repeats=3,
                                nbytes=layer_bytes(size), flops=layer_flops(size))
        out.append({"label": base.label, "ms": stats.median_ms, "gflops": stats.gflops,
                    "right": _sample_right(Y, layer)})
    return out


def _torch_conv():
    """cuDNN's convolution through PyTorch, or None where PyTorch or its GPU is missing (an
    optional comparison: the course never needs PyTorch)."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cudnn.benchmark = True         # let cuDNN pick its fastest algorithm
    # PyTorch lets cuDNN multiply in TF32 (10-bit mantissas) by default: its result then misses
    # a float32 sum's error bound, and the check marks it wrong. Compare float32 with float32.
    torch.backends.cudnn.allow_tf32 = False

    def run(X, W, Y):
        x, w, y = (torch.as_tensor(a, device="cuda") for a in (X, W, Y))
        y.copy_(torch.nn.functional.conv2d(x, w))
    return run


def measure(kernels: dict | None = None, size=SPEED_LAYER, repeats: int = 20,
            seed: int = 16) -> list[dict]:
    """Time a convolution layer's forward pass on a GPU, for a layer of ``size`` (N, C, P, Q, M,
    R, S; the speed test's by default): the course's direct kernel, im2col + chapter 6's GEMM
    with the course's unroll kernel, and cuDNN through PyTorch where it is installed, beside
    ``kernels``: ``{label: ("direct", kernel)}`` for a kernel of Exercise 16.1 (launched as the
    speed test launches it) or ``{label: ("im2col", kernel)}`` for an unroll kernel of Exercise
    16.2 followed by the course's GEMM. Rows: label, ms, TFLOP/s, GB/s (the least bytes a layer
    moves), right (bool: Y checked at 2048 outputs)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the convolution layer")
    from numba import cuda
    d = layer_dims(size)
    layer = _layer(np.random.default_rng(seed), size)
    dX, dW = cuda.to_device(layer["X"]), cuda.to_device(layer["W"])
    Y = cuda.device_array((d["N"], d["M"], d["P"], d["Q"]), np.float32)
    blocks = ((d["Q"] + SPEED_BLOCK[0] - 1) // SPEED_BLOCK[0],
              (d["P"] + SPEED_BLOCK[1] - 1) // SPEED_BLOCK[1], d["N"] * d["M"])
    runs = {"direct, a thread per output (course)": ("direct", reference_conv_forward()),
            "im2col (course) + chapter 6's GEMM": ("im2col", reference_im2col())}
    runs.update(kernels or {})
    out = []

    scratch = im2col_scratch(dX, dW)
    poison = np.full(Y.shape, np.nan, np.float32)

    def record(label, launch):
        Y.copy_to_device(poison)
        stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=layer_bytes(size),
                                flops=layer_flops(size))
        out.append({"label": label, "ms": stats.median_ms, "tflops": stats.gflops / 1e3,
                    "gbps": stats.gbps, "right": _sample_right(Y.copy_to_host(), layer)})

    for label, (kind, kernel) in runs.items():
        if kind == "direct":
            record(label, lambda i, k=kernel: k[blocks, SPEED_BLOCK](dX, dW, Y))
        elif kind == "im2col":
            record(label, lambda i, k=kernel: conv_by_im2col(k, dX, dW, Y, scratch=scratch))
        else:
            raise ValueError(f"{label}: the kind is 'direct' or 'im2col', not {kind!r}")
    vendor = _torch_conv()
    if vendor is not None:
        record(VENDOR_CONV, lambda i: vendor(dX, dW, Y))
    return out


CHART = "ch16_measure"      # the measuring cell's recorded picture: h200_ch16_measure.json here
VENDOR_CONV = "cuDNN through PyTorch (torch.nn.functional.conv2d)"


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): each way of
    :func:`measure` as a bar, cuDNN as a line. Without a GPU, ``chart()`` names the course's own
    run of it instead, recorded on the H200 (``h200_ch16_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    vendor = VENDOR_CONV if any(r["label"] == VENDOR_CONV for r in rows) else None
    d = layer_dims(SPEED_LAYER)
    return {"name": CHART, "rows": rows, "reference": vendor,
            "title": (f"Convolution layer forward: {d['N']} images, {d['C']} → {d['M']} channels, "
                      f"{d['R']} × {d['S']} filters")}
