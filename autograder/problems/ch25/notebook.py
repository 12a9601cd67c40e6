"""What chapter 25's notebook calls besides the checks: the CPU baselines timed, the variance's
error measured three ways over growing offsets (the "break it" experiment), the measuring cell
over row lengths on a GPU and its recorded H200 run for CPU mode, the comparison of the Triton
and Numba LayerNorms, and what stands in for Triton where it cannot be installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder.problems.ch25.references import (reference_layernorm,
                                                 reference_layernorm_triton, reference_rmsnorm,
                                                 torch_layernorm, torch_rmsnorm,
                                                 two_pass_layernorm)
from autograder.problems.ch25.specs import (BASELINES, layernorm_bound, layernorm_host, make_rows,
                                            rmsnorm_bound, rmsnorm_host, speed_shape)
from autograder.problems.ch25.triton_specs import triton_chain
from autograder.problems.kit import njit_on_first_call
from autograder.problems.kit import recorded as recorded_run
from autograder.problems.kit.recorded import NOT_RECORDED

CHART = "ch25_measure"      # the measuring cell's recorded run: h200_ch25_measure.json here
ROW_LENGTHS = (256, 1024, 4096, 16384)
MEASURE_ELEMENTS = 1 << 26  # rows · n at every row length: 256 MiB in, 256 MiB out


# ---- the CPU baseline -------------------------------------------------------------------------------

def time_cpu(rows: int = 4096, n: int = 1024, seed: int = 25) -> list[dict]:
    """NumPy's LayerNorm and RMSNorm and the parallel Welford loop on a (rows, n) array: label,
    ms, GB/s (x read once, y written once), right (bool: within 1e-4 of the float64 result)."""
    from autograder.machine import timing
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, n)).astype(np.float32)
    gamma = rng.uniform(0.5, 2.0, n).astype(np.float32)
    beta = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    eps = np.float32(1e-5)
    y = np.empty_like(x)
    want, _, _ = layernorm_host(x, gamma, beta, eps)
    nbytes = 8 * rows * n
    out = []
    for base in BASELINES.values():
        y[:] = np.nan
        stats = timing.time_cpu(base.label, lambda: base.run(x=x, gamma=gamma, beta=beta,
                                                             eps=eps, y=y), repeats=3, nbytes=nbytes)
        out.append({"label": "LayerNorm: " + base.label, "ms": stats.median_ms,
                    "gbps": stats.gbps, "right": bool(np.allclose(y, want, atol=1e-4))})

    def rms():
        y[...] = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps) * gamma
    stats = timing.time_cpu("rms", rms, repeats=3, nbytes=nbytes)
    out.append({"label": "RMSNorm: NumPy, vectorised over rows (float32, 1 core)",
                "ms": stats.median_ms, "gbps": stats.gbps,
                "right": bool(np.allclose(y, rmsnorm_host(x, gamma, eps)[0], atol=1e-4))})
    return out


# ---- break it: the variance three ways ----------------------------------------------------------

@njit_on_first_call
def _variances():
    import numba

    @numba.njit(cache=False)
    def variances(x):
        """float32 variance of x by E[x²] − E[x]², by two passes, and by Welford's update, each
        one element after another (as one lane of a kernel adds its elements)."""
        n = x.size
        s = np.float32(0.0)
        s2 = np.float32(0.0)
        for i in range(n):
            s += x[i]
            s2 += x[i] * x[i]
        mean = s / np.float32(n)
        textbook = s2 / np.float32(n) - mean * mean
        q = np.float32(0.0)
        for i in range(n):
            d = x[i] - mean
            q += d * d
        two_pass = q / np.float32(n)
        count = np.float32(0.0)
        m = np.float32(0.0)
        m2 = np.float32(0.0)
        for i in range(n):
            count += np.float32(1.0)
            d = x[i] - m
            m += d / count
            m2 += d * (x[i] - m)
        return textbook, two_pass, m2 / np.float32(n)
    return variances


def variance_errors(offsets=(0.0, 1e1, 1e2, 1e3, 1e4, 1e5), n: int = 1024,
                    seed: int = 25) -> list[dict]:
    """For x = offset + N(0, 1) in float32 (n values): the float32 variance by E[x²] − E[x]², by
    two passes and by Welford's update, and each one's error relative to the float64 variance of
    the same float32 values."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    out = []
    for offset in offsets:
        x = (float(offset) + z).astype(np.float32)
        exact = float(np.var(x.astype(np.float64)))
        textbook, two_pass, welford = (float(v) for v in _variances(x))
        out.append({"offset": float(offset), "exact": exact, "textbook": textbook,
                    "two_pass": two_pass, "welford": welford,
                    "textbook_error": abs(textbook - exact) / exact,
                    "two_pass_error": abs(two_pass - exact) / exact,
                    "welford_error": abs(welford - exact) / exact})
    return out


def break_inputs(rows: int = 6, n: int = 300, offset: float = 1e4, seed: int = 25) -> dict:
    """Rows of ``offset`` + N(0, 1) in float32, γ = 1, β = 0, ε = 1e-5: what the break-it cell
    normalises (the right answer is close to the N(0, 1) part itself)."""
    rng = np.random.default_rng(seed)
    x = (offset + rng.standard_normal((rows, n))).astype(np.float32)
    return {"x": x, "gamma": np.ones(n, np.float32), "beta": np.zeros(n, np.float32),
            "eps": np.float32(1e-5)}


# ---- measure: over row lengths, on a GPU --------------------------------------------------------

COURSE_RUNS = ("LayerNorm, Welford + Chan (course)", "LayerNorm, two-pass (course)",
               "RMSNorm (course)")
KINDS = ("layernorm", "rmsnorm", "layernorm_call")


def measure(kernels: dict | None = None, row_lengths=ROW_LENGTHS, repeats: int = 20,
            seed: int = 25, elements: int = MEASURE_ELEMENTS, course=COURSE_RUNS) -> list[dict]:
    """Time LayerNorm and RMSNorm kernels on a GPU at each row length n (rows · n =
    ``elements``, 2^26 by default), launched as the speed test launches them (256 threads, enough blocks
    for every SM): the course's Welford kernel and two-pass kernel (``course``: those of
    :data:`COURSE_RUNS` to time), PyTorch's where it is installed, a copy of the same bytes, and
    ``kernels``: ``{label: ("layernorm", kernel)}``, ``{label: ("rmsnorm", kernel)}`` or
    ``{label: ("layernorm_call", run)}`` (a launcher called as ``run(x, gamma, beta, eps, y)``
    with ``eps`` a Python float: a Triton LayerNorm). Rows: label, n, ms, gbps (x read once, y
    written once), right (bool: the first 64 rows within the exercises' error bounds; a
    launcher's within the Triton exercise's)."""
    from numba import cuda

    from autograder.machine import timing
    timing.require_gpu("Timing LayerNorm and RMSNorm")
    for label, (kind, _) in (kernels or {}).items():
        if kind not in KINDS:
            raise ValueError(f"{label}: the kind is 'layernorm', 'rmsnorm' or 'layernorm_call', "
                             f"not {kind!r}")
    makers = {"LayerNorm, Welford + Chan (course)": ("layernorm", reference_layernorm),
              "LayerNorm, two-pass (course)": ("layernorm", two_pass_layernorm),
              "RMSNorm (course)": ("rmsnorm", reference_rmsnorm)}
    runs = {label: (makers[label][0], makers[label][1]()) for label in course}
    runs.update(kernels or {})
    vendors = {"LayerNorm, PyTorch (F.layer_norm)": ("layernorm", torch_layernorm()),
               "RMSNorm, PyTorch (F.rms_norm)": ("rmsnorm", torch_rmsnorm())}
    out = []
    for n in row_lengths:
        rows = max(1, int(elements) // int(n))
        rng = np.random.default_rng(seed)
        x = make_rows(rng, 64, n, 1e-5)
        x = np.tile(x, (-(-rows // 64), 1))[:rows]
        gamma = rng.uniform(0.5, 2.0, n).astype(np.float32)
        beta = rng.uniform(-1.0, 1.0, n).astype(np.float32)
        eps = np.float32(1e-5)
        check = min(64, rows)                   # the rows whose result is checked
        y_ln = layernorm_host(x[:check], gamma, beta, eps)[0]
        y_rms = rmsnorm_host(x[:check], gamma, eps)[0]
        # (expected, allowed error): the exercises' own float32 error bounds
        want = {"layernorm": (y_ln, layernorm_bound(x[:check], gamma, beta, eps, y_ln)),
                "rmsnorm": (y_rms, rmsnorm_bound(x[:check], y_rms, eps)),
                "layernorm_call": (y_ln, layernorm_bound(x[:check], gamma, beta, eps, y_ln,
                                                         c=triton_chain(n)))}
        dx, dg, db = cuda.to_device(x), cuda.to_device(gamma), cuda.to_device(beta)
        dy = cuda.device_array_like(dx)
        poison = np.full((check, n), np.nan, np.float32)
        nbytes = 8 * rows * n
        blocks, threads = speed_shape((rows, n))

        def record(label, kind, launch):
            dy[:check].copy_to_device(poison)
            stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=nbytes)
            got = dy[:check].copy_to_host()
            expected, allowed = want[kind]
            out.append({"label": label, "n": int(n), "ms": stats.median_ms, "gbps": stats.gbps,
                        "right": bool(np.all(np.abs(got - expected) <= allowed))})

        for label, (kind, k) in runs.items():
            if kind == "layernorm":
                record(label, kind, lambda i, k=k: k[blocks, threads](dx, dg, db, eps, dy))
            elif kind == "rmsnorm":
                record(label, kind, lambda i, k=k: k[blocks, threads](dx, dg, eps, dy))
            else:
                record(label, kind, lambda i, k=k: k(dx, dg, db, float(eps), dy))
        for label, (kind, fn) in vendors.items():
            if fn is None:
                continue
            if kind == "layernorm":
                record(label, kind, lambda i, f=fn: f(dx, dg, db, eps, dy))
            else:
                record(label, kind, lambda i, f=fn: f(dx, dg, eps, dy))
        copy = timing.copy_ceiling(nbytes, repeats=repeats)
        out.append({"label": "copy of the same bytes", "n": int(n), "ms": copy.median_ms,
                    "gbps": copy.gbps, "right": True})
    return out


def compare_triton(triton_launcher, numba_kernel=None, row_lengths=ROW_LENGTHS,
                   repeats: int = 20) -> list[dict]:
    """On a GPU: the learner's Triton LayerNorm (``triton_launcher(x, gamma, beta, eps, y)``)
    beside the course's Triton kernel, the course's Numba kernel (Welford + Chan), the learner's
    Numba ``numba_kernel`` (25.1) where given, PyTorch's where installed and a copy, over row
    lengths, as :func:`measure` times them."""
    from autograder.machine import timing
    timing.require_gpu("Comparing the Triton and Numba LayerNorms")
    kernels = {"LayerNorm, Triton (yours)": ("layernorm_call", triton_launcher),
               "LayerNorm, Triton (course)": ("layernorm_call", reference_layernorm_triton())}
    if numba_kernel is not None:
        kernels["LayerNorm, Numba (yours, 25.1)"] = ("layernorm", numba_kernel)
    return measure(kernels, row_lengths=row_lengths, repeats=repeats,
                   course=("LayerNorm, Welford + Chan (course)",))


class TritonMissing:
    """Stands in for ``triton`` and ``triton.language`` where Triton cannot be installed, so that
    the notebook's cells that define Triton kernels still run: any attribute or call gives the
    stand-in back (``@triton.jit``, ``tl.constexpr``, ``triton.next_power_of_2``), and launching a
    kernel (``kernel[grid]``) raises with ``why``."""

    def __init__(self, why: str):
        self.why = why

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, grid):
        raise RuntimeError(self.why)

    def __repr__(self) -> str:
        return f"TritonMissing({self.why!r})"


# ---- the recorded run and the chart -------------------------------------------------------------

def record(rows: list[dict], folder: str | Path) -> Path:
    """Write ``rows`` from :func:`measure` with the device and versions as
    ``<folder>/h200_ch25_measure.json`` (the file this chapter ships for CPU mode)."""
    return recorded_run.write(rows, folder, CHART,
                              "LayerNorm and RMSNorm over row lengths")


def recorded() -> dict | None:
    """The course's H200 run of the measuring cell, or None while it has not been recorded."""
    return recorded_run.read(CHART)


def chart(rows: list[dict] | None = None, title: str = ""):
    """GB/s over the row length, one line per kernel (rows from :func:`measure`, or the recorded
    H200 run when ``rows`` is None). Returns the figure, or None when there is nothing to draw
    (and says why)."""
    import matplotlib.pyplot as plt
    if rows is None:
        kept = recorded()
        if kept is None:
            print(NOT_RECORDED)
            return None
        rows = kept["rows"]
        title = f"{kept['title']}: measured by the course on {kept['device']}"
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label in dict.fromkeys(r["label"] for r in rows):
        mine = sorted((r for r in rows if r["label"] == label), key=lambda r: r["n"])
        style = "k--" if label.startswith("copy") else "o-"
        ax.plot([r["n"] for r in mine], [r["gbps"] for r in mine], style, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("row length n (rows · n fixed)")
    ax.set_ylabel("GB/s (x read once, y written once)")
    ax.set_title(title or "LayerNorm and RMSNorm over row lengths")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
