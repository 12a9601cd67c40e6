"""What chapter 26's notebook calls besides the checks: the CPU baselines timed, the overflow of a
softmax without its maximum (the "break it" experiment), the bytes of the naive and the tiled
forward passes counted, the measuring cell over sequence lengths on a GPU (the course's naive,
FlashAttention-style and Triton kernels, the learner's, PyTorch's ``scaled_dot_product_attention``
with its math and its flash backends where PyTorch is installed) and its recorded H200 run for CPU
mode, and the comparison of the Triton and Numba forward passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder.problems.ch26.references import (reference_attention_naive,
                                                 reference_attention_triton,
                                                 reference_flash_attention, torch_sdpa)
from autograder.problems.ch26.specs import (BASELINES, U16, attention_host, attention_sample,
                                            make_attention)
from autograder.problems.ch26.triton_specs import TRITON_DOT_FACTOR
from autograder.problems.kit import recorded as recorded_run
from autograder.problems.kit.recorded import NOT_RECORDED

CHART = "ch26_measure"      # the measuring cell's recorded run: h200_ch26_measure.json here
LENGTHS = (512, 1024, 2048, 4096)
HEAD_DIMS = (64, 128)
TOKENS = 1 << 15            # bh · n at every length: 32768 query rows per launch
# H200 (SXM) peaks from NVIDIA's datasheet: float32 on the CUDA cores, and float16 on tensor
# cores with float32 accumulation (dense, no sparsity).
PEAK_FP32_TFLOPS = 67.0
PEAK_FP16_TENSOR_TFLOPS = 989.0


# ---- the CPU baseline -------------------------------------------------------------------------------

def time_cpu(bh: int = 8, n: int = 512, d: int = 64, seed: int = 26) -> list[dict]:
    """NumPy's attention (S materialised per head, float32) and the parallel loop on float16
    inputs of (bh, n, d): label, ms, GFLOP/s (4·n²·d per head), right (bool: within 1e-3 of the
    float64 result, relative to the largest |O|)."""
    from autograder.machine import timing
    inputs = make_attention(np.random.default_rng(seed), bh, n, d, dtype=np.float16)
    want = attention_host(inputs["q"], inputs["k"], inputs["v"], inputs["scale"], 0)
    o = np.empty((bh, n, d), np.float32)
    flops = 4 * bh * n * n * d
    out = []
    for base in BASELINES.values():
        o[:] = np.nan
        stats = timing.time_cpu(base.label, lambda: base.run(o=o, **inputs), repeats=3,
                                flops=flops)
        out.append({"label": base.label, "ms": stats.median_ms, "gflops": stats.gflops,
                    "right": bool(np.max(np.abs(o - want)) <= 1e-3 * np.max(np.abs(want)))})
    return out


# ---- break it: exp without the maximum ----------------------------------------------------------------

def overflow_demo(scores=(10.0, 50.0, 88.0, 89.0, 120.0)) -> list[dict]:
    """A softmax over a row of scores [0, s] in float32, with and without the maximum subtracted:
    exp(s) overflows float32 above 88.72, and inf / inf is NaN."""
    out = []
    with np.errstate(over="ignore", invalid="ignore"):
        for s in scores:
            row = np.array([0.0, s], np.float32)
            plain = np.exp(row) / np.exp(row).sum()
            shifted = np.exp(row - row.max())
            shifted /= shifted.sum()
            out.append({"score": float(s), "exp": float(np.exp(np.float32(s))),
                        "plain": plain.tolist(), "stable": shifted.tolist()})
    return out


def traffic(n: int, d: int, bh: int = 1, tile_m: int = 64, in_bytes: int = 2) -> dict:
    """Bytes to and from global memory of one forward pass (the counts the notebook derives):
    ``naive``: Q, K and V read once, S written and read back, P written and read back, O written
    (a thread per row reading K and V from the caches); ``flash``: Q read once, K and V once per
    query tile (ceil(n / tile_m) times), O written; ``ideal``: every input read once, O written
    once; ``scores``: the bytes of S alone."""
    qkv = bh * n * d * in_bytes          # one of Q, K, V
    scores = bh * n * n * 4
    o = bh * n * d * 4
    tiles = -(-n // tile_m)
    return {"naive": 3 * qkv + 4 * scores + o, "flash": qkv + 2 * tiles * qkv + o,
            "ideal": 3 * qkv + o, "scores": scores}


# ---- measure: over sequence lengths, on a GPU ------------------------------------------------------

TORCH_MATH = "PyTorch SDPA, math backend (float32)"
TORCH_FLASH = "PyTorch SDPA, flash backend (float16, tensor cores)"
COURSE_RUNS = ("naive, S in global memory (course)", "FlashAttention-style, Numba (course)",
               "FlashAttention-style, Triton (course)")
KINDS = ("naive", "flash", "call")


def measure(kernels: dict | None = None, lengths=LENGTHS, head_dims=HEAD_DIMS, repeats: int = 10,
            seed: int = 26, tokens: int = TOKENS, course=COURSE_RUNS, causal: int = 0,
            vendors: bool = True) -> list[dict]:
    """Time attention forward passes on a GPU on float16 inputs of (bh, n, d) with bh · n =
    ``tokens``, at each length n and head dimension d: the course's kernels (``course``: labels of
    :data:`COURSE_RUNS`), PyTorch's ``scaled_dot_product_attention`` with its math backend (the
    inputs widened to float32: S, the softmax and P V in float32, the Numba kernels' precision)
    and its flash backend
    (tensor cores) where PyTorch is installed with a GPU, and ``kernels``: ``{label: ("naive",
    kernel)}`` (26.1's launch, a scratch S, the inputs widened to float32 as 26.1 takes them),
    ``{label: ("flash", kernel)}`` (26.2's, blocks of
    64 rows) or ``{label: ("call", run)}`` (a launcher ``run(q, k, v, scale, causal, o)``: a
    Triton one). Rows: label, n, d, ms, tflops (4·n²·d per head), right (bool: 256 sampled
    outputs within 26.3's bound, the looser of the chapter's two)."""
    from numba import cuda

    from autograder.machine import timing
    timing.require_gpu("Timing attention")
    for label, (kind, _) in (kernels or {}).items():
        if kind not in KINDS:
            raise ValueError(f"{label}: the kind is 'naive', 'flash' or 'call', not {kind!r}")
    makers = {COURSE_RUNS[0]: ("naive", reference_attention_naive),
              COURSE_RUNS[1]: ("flash", reference_flash_attention),
              COURSE_RUNS[2]: ("call", reference_attention_triton)}
    runs = {label: (makers[label][0], makers[label][1]()) for label in course}
    runs.update(kernels or {})
    half_output = set()         # runs whose output is float16 (one more rounding allowed)
    if vendors:
        for label, backend in ((TORCH_MATH, "math"), (TORCH_FLASH, "flash")):
            run = torch_sdpa(backend)
            if run is not None:
                runs[label] = ("call", run)
                if backend == "flash":
                    half_output.add(label)
    out = []
    rng = np.random.default_rng(seed)
    for d in head_dims:
        for n in lengths:
            bh = max(1, int(tokens) // int(n))
            inputs = make_attention(rng, bh, n, d, dtype=np.float16, causal=causal, fast=True)
            idx = np.sort(rng.choice(bh * n * d, size=min(256, bh * n * d), replace=False))
            want, allowed = attention_sample(inputs, idx, dot_factor=TRITON_DOT_FACTOR,
                                             p_half=True)
            dq, dk, dv = (cuda.to_device(inputs[x]) for x in ("q", "k", "v"))
            # 26.1 takes float32 inputs: the same values widened, for the naive runs.
            wide = [cuda.to_device(inputs[x].astype(np.float32)) for x in ("q", "k", "v")] \
                if any(kind == "naive" for kind, _ in runs.values()) else None
            do = cuda.device_array((bh, n, d), np.float32)
            scale = inputs["scale"]
            flops = 4 * bh * n * n * d * (0.5 if causal else 1.0)
            for label, (kind, k) in runs.items():
                if kind == "naive":
                    s = cuda.device_array((bh, n, n), np.float32)
                    blocks = -(-bh * n // 128)

                    def launch(i, k=k, s=s, blocks=blocks):
                        k[blocks, 128](wide[0], wide[1], wide[2], scale, causal, s, do)
                elif kind == "flash":
                    def launch(i, k=k):
                        k[(-(-n // 64), bh), 64](dq, dk, dv, scale, causal, do)
                else:
                    def launch(i, k=k):
                        k(dq, dk, dv, float(scale), causal, do)
                do.copy_to_device(np.full((bh, n, d), np.nan, np.float32))
                try:
                    stats = timing.time_gpu(label, launch, repeats=repeats, flops=int(flops))
                except Exception as exc:            # noqa: BLE001 - one run's failure, recorded
                    out.append({"label": label, "n": int(n), "d": int(d), "ms": float("nan"),
                                "tflops": float("nan"), "right": False,
                                "error": f"{type(exc).__name__}: {exc}"[:300]})
                    continue
                got = do.copy_to_host().reshape(-1)[idx]
                tol = allowed["o"] + (U16 * np.abs(want["o"]) if label in half_output else 0.0)
                out.append({"label": label, "n": int(n), "d": int(d), "ms": stats.median_ms,
                            "tflops": stats.gflops / 1e3,
                            "right": bool(np.all(np.abs(got - want["o"]) <= tol))})
                if kind == "naive":
                    del s
    return out


def compare_triton(triton_launcher, numba_kernel=None, lengths=LENGTHS, head_dims=HEAD_DIMS,
                   repeats: int = 10) -> list[dict]:
    """On a GPU: the learner's Triton attention (``triton_launcher(q, k, v, scale, causal, o)``)
    beside the course's Triton kernel, the course's Numba FlashAttention-style kernel, the
    learner's Numba ``numba_kernel`` (26.2) where given, and PyTorch's where installed, as
    :func:`measure` times them."""
    from autograder.machine import timing
    timing.require_gpu("Comparing the Triton and Numba attention kernels")
    kernels = {"Triton (yours)": ("call", triton_launcher)}
    if numba_kernel is not None:
        kernels["Numba, FlashAttention-style (yours, 26.2)"] = ("flash", numba_kernel)
    return measure(kernels, lengths=lengths, head_dims=head_dims, repeats=repeats,
                   course=COURSE_RUNS[1:])


# ---- the recorded run and the chart -------------------------------------------------------------

def record(rows: list[dict], folder: str | Path) -> Path:
    """Write ``rows`` from :func:`measure` with the device and versions as
    ``<folder>/h200_ch26_measure.json`` (the file this chapter ships for CPU mode)."""
    return recorded_run.write(rows, folder, CHART,
                              "Attention forward passes over sequence lengths")


def recorded() -> dict | None:
    """The course's H200 run of the measuring cell, or None while it has not been recorded."""
    return recorded_run.read(CHART)


def chart(rows: list[dict] | None = None, title: str = ""):
    """TFLOP/s over the sequence length n, one panel per head dimension, one line per kernel,
    with the H200's float32 peak (the CUDA cores) drawn dashed (rows from :func:`measure`, or the
    recorded H200 run when ``rows`` is None). Returns the figure, or None when there is nothing
    to draw (and says why)."""
    import matplotlib.pyplot as plt
    if rows is None:
        kept = recorded()
        if kept is None:
            print(NOT_RECORDED)
            return None
        rows = kept["rows"]
        title = f"{kept['title']}: measured by the course on {kept['device']}"
    dims = sorted({r["d"] for r in rows})
    fig, axes = plt.subplots(1, len(dims), figsize=(6 * len(dims), 4.5), squeeze=False)
    for ax, d in zip(axes[0], dims):
        mine = [r for r in rows if r["d"] == d]
        for label in dict.fromkeys(r["label"] for r in mine):
            line = sorted((r for r in mine if r["label"] == label), key=lambda r: r["n"])
            ax.plot([r["n"] for r in line], [r["tflops"] for r in line], "o-", label=label)
        ax.axhline(PEAK_FP32_TFLOPS, color="k", linestyle="--", linewidth=1,
                   label="float32 peak of the CUDA cores")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length n (bh · n fixed)")
        ax.set_ylabel("TFLOP/s (4·n²·d per head)")
        ax.set_title(f"d = {d}")
        ax.legend(fontsize=7)
    fig.suptitle(title or "Attention forward passes over sequence lengths")
    fig.tight_layout()
    return fig
