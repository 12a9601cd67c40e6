"""What chapter 27's notebook calls besides the checks: the CPU baseline timed, the quantisation
error of int8 and int4 weights against float16 (the accuracy side of the trade), the measuring
cell on a GPU (the course's int8 and int4 kernels, the float16 product, PyTorch where installed,
a copy of the same bytes) and its recorded H200 run for CPU mode, the comparison of the Triton
and Numba int4 products, and what stands in for Triton where it cannot be installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder.core.checks import TINY32, gamma
from autograder.problems.ch25.notebook import TritonMissing  # noqa: F401  (the same stand-in)
from autograder.problems.ch27.references import (fp16_matvec, reference_int4_matmul,
                                                 reference_int4_triton, reference_int8_matvec,
                                                 torch_dequantized_matmul, torch_fp16_matmul)
from autograder.problems.ch27.specs import (INT4_BASELINES, INT8_BASELINES, SPEED_GROUP, bound,
                                            dequantize, draw_scales, draw_x, groups, pack_int4,
                                            product_host, quantize, speed_shape, unpack_int4)
from autograder.problems.ch27.triton_specs import triton_chain
from autograder.problems.kit import recorded as recorded_run
from autograder.problems.kit.recorded import NOT_RECORDED

CHART = "ch27_measure"      # the measuring cell's recorded run: h200_ch27_measure.json here
SHAPES = ((4096, 4096), (8192, 8192), (16384, 8192))     # (N, K) of the measuring cell
BATCHES = (1, 8)


# ---- the CPU baseline -------------------------------------------------------------------------------

def time_cpu(n: int = 4096, k: int = 4096, batch: int = 1, seed: int = 27) -> list[dict]:
    """NumPy's dequantise-then-multiply for int8 (B = 1) and int4 (B = ``batch``) weights of
    n × k, and float16 weights multiplied in float32: label, ms, GB/s (the bytes of the weights
    in their format, the scales, x and y), right (bool: within the checks' bound)."""
    from autograder.machine import timing
    rng = np.random.default_rng(seed)
    q8 = rng.integers(-127, 128, (n, k), dtype=np.int8)
    q4 = rng.integers(-8, 8, (n, k), dtype=np.int8)
    scales = draw_scales(rng, n, groups(k, SPEED_GROUP))
    x = draw_x(rng, (batch, k))
    packed = pack_int4(q4)
    out = []
    sbytes = scales.nbytes + x.nbytes + 4 * n * batch
    runs = (("int8 weights, " + INT8_BASELINES["numpy"].label, q8, q8.nbytes + sbytes,
             lambda y: INT8_BASELINES["numpy"].run(q8, scales, x[0], SPEED_GROUP, y[0])),
            ("int4 weights, " + INT4_BASELINES["numpy"].label, q4, packed.nbytes + sbytes,
             lambda y: INT4_BASELINES["numpy"].run(packed, scales, x, SPEED_GROUP, y)))
    for label, q, nbytes, run in runs:
        y = np.full((batch, n), np.nan, np.float32)
        stats = timing.time_cpu(label, lambda: run(y), repeats=3, nbytes=nbytes)
        want, mag = product_host(dequantize(q, scales, SPEED_GROUP), x)
        rows = 1 if q is q8 else batch
        ok = np.abs(y[:rows] - want[:rows]) <= bound(mag[:rows], k, SPEED_GROUP)
        out.append({"label": label, "ms": stats.median_ms, "gbps": stats.gbps,
                    "right": bool(ok.all())})
    w16 = dequantize(q8, scales, SPEED_GROUP).astype(np.float16)
    y = np.empty((batch, n), np.float32)

    def fp16():
        y[...] = x.astype(np.float32) @ w16.astype(np.float32).T
    stats = timing.time_cpu("fp16", fp16, repeats=3, nbytes=w16.nbytes + sbytes)
    out.append({"label": "float16 weights, NumPy: to float32, then x @ W.T", "ms": stats.median_ms,
                "gbps": stats.gbps, "right": True})
    return out


# ---- accuracy: what quantising costs ------------------------------------------------------------

def quantization_errors(n: int = 256, k: int = 1024, group_sizes=(32, 128, 1024),
                        seed: int = 27, outlier: float = 0.0) -> list[dict]:
    """Weights N(0, 0.02²) of n × k (``outlier``: one weight per row that many standard deviations
    out), activations N(0, 1) in float16: the relative error of y = W x against the float64
    product with the original weights, for float16 weights and for int8 and int4 weights with each
    group size (rms over y, relative to the rms of y), and the bytes a weight costs."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, k)) * 0.02
    if outlier:
        w[np.arange(n), rng.integers(0, k, n)] = 0.02 * float(outlier)
    x = rng.standard_normal(k).astype(np.float16).astype(np.float64)
    exact = w @ x
    scale = np.sqrt(np.mean(exact ** 2))

    def err(wq) -> float:
        return float(np.sqrt(np.mean((wq @ x - exact) ** 2)) / scale)
    out = [{"format": "float16", "group": 0, "bytes_per_weight": 2.0,
            "error": err(w.astype(np.float16).astype(np.float64))}]
    for bits in (8, 4):
        for g in group_sizes:
            q, s = quantize(w, g, bits)
            out.append({"format": f"int{bits}", "group": int(g),
                        "bytes_per_weight": bits / 8 + 2 / g,
                        "error": err(dequantize(q, s, g))})
    return out


# ---- measure: on a GPU ---------------------------------------------------------------------------

KINDS = ("int8", "int4", "int4_call")


def _inputs(n: int, k: int, batch: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    q8 = rng.integers(-127, 128, (n, k), dtype=np.int8)
    packed = rng.integers(0, 256, (n, -(-k // 2)), dtype=np.uint8)
    scales = draw_scales(rng, n, groups(k, SPEED_GROUP))
    return {"q8": q8, "packed": packed, "scales": scales, "x": draw_x(rng, (batch, k))}


def measure(kernels: dict | None = None, shapes=SHAPES, batches=BATCHES, repeats: int = 20,
            seed: int = 27, course: bool = True) -> list[dict]:
    """Time quantised products on a GPU at each (N, K) of ``shapes`` and each batch size, G = 128,
    launched as the speed tests launch them (256 threads, 8 blocks per SM): the course's int8
    (B = 1) and int4 kernels and its float16 matrix–vector product (``course``), its Triton int4
    kernel where Triton runs, PyTorch's float16 product and its dequantise-then-multiply where
    PyTorch is installed, a copy of each format's bytes, and ``kernels``: ``{label: ("int8",
    kernel)}``, ``{label: ("int4", kernel)}`` or ``{label: ("int4_call", run)}`` (a launcher
    called as ``run(packed, scales, x, group, y)``: a Triton one). Rows: label, n, k, batch, ms,
    gbps (the bytes the format must move: weights, scales, x, y), roof_ms (those bytes at the
    copy's speed), right (bool: the first 64 outputs within the exercises' bounds)."""
    from numba import cuda

    from autograder.machine import timing
    from autograder.machine.triton_bridge import unavailable_reason
    timing.require_gpu("Timing quantised products")
    for label, (kind, _) in (kernels or {}).items():
        if kind not in KINDS:
            raise ValueError(f"{label}: the kind is 'int8', 'int4' or 'int4_call', not {kind!r}")
    runs = {}
    if course:
        runs["int8, Numba (course)"] = ("int8", reference_int8_matvec())
        runs["int4, Numba (course)"] = ("int4", reference_int4_matmul())
        runs["float16, Numba (course)"] = ("fp16", fp16_matvec())
        if unavailable_reason() is None:
            runs["int4, Triton (course)"] = ("int4_call", reference_int4_triton())
    runs.update(kernels or {})
    vendors = {"float16, PyTorch (cuBLAS)": ("torch_fp16", torch_fp16_matmul()),
               "int8 dequantised, then cuBLAS (PyTorch)": ("torch_int8",
                                                            torch_dequantized_matmul())}
    out = []
    for n, k in shapes:
        for batch in batches:
            host = _inputs(n, k, batch, seed)
            check = min(64, n)
            w8 = dequantize(host["q8"][:check], host["scales"][:check], SPEED_GROUP)
            w4 = dequantize(unpack_int4(host["packed"][:check], k), host["scales"][:check],
                            SPEED_GROUP)
            w16_host = dequantize(host["q8"], host["scales"], SPEED_GROUP).astype(np.float16)
            w16 = w16_host[:check].astype(np.float64)
            want = {"int8": product_host(w8, host["x"]), "int4": product_host(w4, host["x"]),
                    "fp16": product_host(w16, host["x"])}
            d = {name: cuda.to_device(v) for name, v in host.items()}
            d_w16 = cuda.to_device(w16_host)
            d_y = cuda.device_array((batch, n), np.float32)
            poison = np.full((batch, check), np.nan, np.float32)
            scale_bytes = host["scales"].nbytes + host["x"].nbytes + d_y.nbytes
            nbytes = {"int8": host["q8"].nbytes + scale_bytes,
                      "int4": host["packed"].nbytes + scale_bytes,
                      "fp16": w16_host.nbytes + host["x"].nbytes + d_y.nbytes}
            copies = {fmt: timing.copy_ceiling(b, repeats=repeats) for fmt, b in nbytes.items()}
            blocks, threads = speed_shape((batch, n, k))

            def record(label, fmt, launch, chain_of=None):
                for b in range(batch):
                    d_y[b, :check].copy_to_device(poison[b])
                stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=nbytes[fmt])
                got = d_y.copy_to_host()[:, :check]
                rows = 1 if fmt in ("int8", "fp16") and batch > 1 else batch
                y, mag = want[fmt]
                allowed = bound(mag, k, SPEED_GROUP) if chain_of is None else \
                    gamma(chain_of(k, SPEED_GROUP)) * mag + TINY32
                if fmt == "fp16" or label.startswith("int8 dequantised"):
                    allowed = 1e-2 * mag + 1e-6           # PyTorch's fp16 product: not bounded here
                ok = np.abs(got[:rows] - y[:rows]) <= allowed[:rows]
                out.append({"label": label, "n": int(n), "k": int(k), "batch": int(batch),
                            "ms": stats.median_ms, "gbps": stats.gbps,
                            "roof_ms": copies[fmt].median_ms, "right": bool(ok.all())})

            x1 = d["x"][0]
            for label, (kind, kern) in runs.items():
                if kind in ("int8", "fp16") and batch != 1:
                    continue                              # matrix–vector kernels: B = 1 only
                if kind == "int8":
                    record(label, "int8", lambda i, kern=kern: kern[blocks, threads](
                        d["q8"], d["scales"], x1, SPEED_GROUP, d_y[0]))
                elif kind == "fp16":
                    record(label, "fp16", lambda i, kern=kern: kern[blocks, threads](
                        d_w16, x1, d_y[0]))
                elif kind == "int4":
                    record(label, "int4", lambda i, kern=kern: kern[blocks, threads](
                        d["packed"], d["scales"], d["x"], SPEED_GROUP, d_y))
                else:
                    record(label, "int4", lambda i, kern=kern: kern(
                        d["packed"], d["scales"], d["x"], SPEED_GROUP, d_y), triton_chain)
            for label, (kind, fn) in vendors.items():
                if fn is None:
                    continue
                if kind == "torch_fp16":
                    record(label, "fp16", lambda i, fn=fn: fn(d_w16, d["x"], d_y))
                elif batch == 1:
                    record(label, "int8", lambda i, fn=fn: fn(d["q8"], d["scales"], d["x"],
                                                               SPEED_GROUP, d_y))
            for fmt in ("int8", "int4", "fp16"):
                out.append({"label": f"copy of the {fmt} bytes", "n": int(n), "k": int(k),
                            "batch": int(batch), "ms": copies[fmt].median_ms,
                            "gbps": copies[fmt].gbps, "roof_ms": copies[fmt].median_ms,
                            "right": True})
    return out


def compare_triton(triton_launcher, numba_kernel=None, shapes=SHAPES, batches=BATCHES,
                   repeats: int = 20) -> list[dict]:
    """On a GPU: the learner's Triton int4 product (``triton_launcher(packed, scales, x, group,
    y)``) beside the course's Triton kernel, the course's Numba int4 kernel, the learner's Numba
    ``numba_kernel`` (27.3) where given, PyTorch's float16 product where installed and the copy,
    timed as :func:`measure` times them."""
    from autograder.machine import timing
    timing.require_gpu("Comparing the Triton and Numba int4 products")
    kernels = {"int4, Triton (yours)": ("int4_call", triton_launcher),
               "int4, Triton (course)": ("int4_call", reference_int4_triton()),
               "int4, Numba (course)": ("int4", reference_int4_matmul())}
    if numba_kernel is not None:
        kernels["int4, Numba (yours, 27.3)"] = ("int4", numba_kernel)
    return measure(kernels, shapes=shapes, batches=batches, repeats=repeats, course=False)


# ---- the recorded run and the chart -------------------------------------------------------------

def record(rows: list[dict], folder: str | Path) -> Path:
    """Write ``rows`` from :func:`measure` with the device and versions as
    ``<folder>/h200_ch27_measure.json`` (the file this chapter ships for CPU mode)."""
    return recorded_run.write(rows, folder, CHART,
                              "Quantised and float16 products against the copy")


def recorded() -> dict | None:
    """The course's H200 run of the measuring cell, or None while it has not been recorded."""
    return recorded_run.read(CHART)


def chart(rows: list[dict] | None = None, title: str = ""):
    """Time per kernel at each (N, K, B), as bars, with each format's copy time (its roofline) as
    a black tick on the bar: rows from :func:`measure`, or the recorded H200 run when ``rows`` is
    None. Returns the figure, or None when there is nothing to draw (and says why)."""
    import matplotlib.pyplot as plt
    if rows is None:
        kept = recorded()
        if kept is None:
            print(NOT_RECORDED)
            return None
        rows = kept["rows"]
        title = f"{kept['title']}: measured by the course on {kept['device']}"
    rows = [r for r in rows if not r["label"].startswith("copy")]
    shapes = list(dict.fromkeys((r["n"], r["k"], r["batch"]) for r in rows))
    fig, axes = plt.subplots(1, len(shapes), figsize=(3.2 * len(shapes) + 1, 4.5), squeeze=False)
    for ax, (n, k, b) in zip(axes[0], shapes):
        mine = [r for r in rows if (r["n"], r["k"], r["batch"]) == (n, k, b)]
        pos = np.arange(len(mine))
        ax.barh(pos, [r["ms"] * 1e3 for r in mine], color="tab:blue")
        ax.plot([r["roof_ms"] * 1e3 for r in mine], pos, "k|", markersize=14)
        ax.set_yticks(pos)
        ax.set_yticklabels([r["label"] for r in mine], fontsize=7)
        ax.set_title(f"N = {n}, K = {k}, B = {b}", fontsize=8)
        ax.set_xlabel("µs (tick: a copy of the same bytes)", fontsize=8)
    fig.suptitle(title or "Quantised and float16 products against the copy", fontsize=9)
    fig.tight_layout()
    return fig
