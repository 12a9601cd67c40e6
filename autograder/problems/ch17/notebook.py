"""What chapter 17's notebook calls outside the graded cells: a small scan to try kernels on, the
scatter experiment (one thread per sample, with and without atomics, race-checked in CPU mode),
the CPU baselines timed, k-space chunks in constant memory by compiling one kernel per chunk, and
the "measure it" cell (scatter, gather, fast gather, chunked, per-chunk constant memory)."""

from __future__ import annotations

import math
import time

import numpy as np

from autograder.core.spec import skipped_while_graded
from autograder.machine import device
from autograder.problems.ch17.references import (TWO_PI, reference_fhd_chunked,
                                                 reference_fhd_gather, reference_fhd_gather_fast,
                                                 reference_fhd_scatter)
from autograder.problems.ch17.specs import (BASELINES, SPEED_BLOCK, SPEED_SIZE, TRIG_FAST,
                                            TRIG_PLAIN, fhd_bound, fhd_bytes, fhd_flops,
                                            fhd_host, fhd_sampled, scan_inputs)

NAMES = ("kx", "ky", "kz", "x", "y", "z", "rMu", "iMu")


def small_scan(n: int = 10, m: int = 7, seed: int = 17) -> dict:
    """A scan of ``n`` voxels and ``m`` samples (the check's kind of inputs), with its float64
    answer ``re``, ``im`` and the bound of a kernel with libdevice's sin and cos, ``bound``."""
    scan = scan_inputs(np.random.default_rng(seed), (n, m))
    args = dict(scan)
    scan["re"], scan["im"] = fhd_host(**args)
    scan["bound"] = fhd_bound(**args, trig=TRIG_PLAIN)
    scan["bound_fast"] = fhd_bound(**args, trig=TRIG_FAST)
    return scan


def run_fhd(kernel, scan: dict, threads: int = 64, per: str = "voxel"):
    """Launch ``kernel`` on ``scan`` with one thread per voxel (``per="voxel"``) or per sample
    (``per="sample"``: the outputs start at zero, as atomic adds need); return (rFhD, iFhD).
    In CPU mode a per-sample launch race-checks every access to the outputs: two threads that
    add to one voxel without an atomic stop it with a ``GlobalMemoryRace``."""
    from numba import cuda
    n, m = scan["x"].size, scan["kx"].size
    args = [cuda.to_device(scan[k]) for k in NAMES]
    if per == "sample":
        zeros = {"rFhD": np.zeros(n, np.float32), "iFhD": np.zeros(n, np.float32)}
        if device.current().is_gpu:
            outs = [cuda.to_device(zeros["rFhD"]), cuda.to_device(zeros["iFhD"])]
        else:
            from autograder.machine.simulator import races
            tracked = races.track_outputs(zeros, what="the voxels' sums", advice=(
                "every thread adds into every voxel: two threads' read-add-write of one voxel "
                "interleave unless the add is atomic (cuda.atomic.add)"))
            outs = [tracked["rFhD"], tracked["iFhD"]]
        kernel[(m + threads - 1) // threads, threads](*args, *outs)
    elif per == "voxel":
        outs = [cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)]
        kernel[(n + threads - 1) // threads, threads](*args, *outs)
    else:
        raise ValueError(f"per is 'voxel' or 'sample', not {per!r}")
    return tuple(np.asarray(o) if isinstance(o, np.ndarray) else o.copy_to_host() for o in outs)


def within_bound(got: tuple, scan: dict, fast: bool = False) -> bool:
    """Are both outputs within the bound (libdevice's, or fast trigonometry's)?"""
    bound = scan["bound_fast" if fast else "bound"]
    return bool(np.all(np.abs(got[0] - scan["re"]) <= bound)
                and np.all(np.abs(got[1] - scan["im"]) <= bound))


# ---- constant memory: one kernel per chunk ---------------------------------------------------------

cuda = float32 = None       # bound on first use (the simulator swaps module globals named cuda)


def _bind():
    global cuda, float32
    from numba import cuda as numba_cuda, float32 as f32
    cuda, float32 = numba_cuda, f32


def const_chunk_kernel(chunk: np.ndarray):
    """A kernel with one chunk of samples (a [5, C] float32 array: kx, ky, kz, rMu, iMu) compiled
    into it as constant memory by ``cuda.const.array_like``; it adds the chunk's terms to
    rFhD and iFhD (one thread per voxel). A new chunk is a new kernel: a new compilation."""
    _bind()
    chunk = np.ascontiguousarray(chunk, np.float32)

    @cuda.jit
    def fhd_const_chunk(x, y, z, rFhD, iFhD):
        k = cuda.const.array_like(chunk)
        n = cuda.grid(1)
        if n < x.size:
            xn, yn, zn = x[n], y[n], z[n]
            re = rFhD[n]
            im = iFhD[n]
            for j in range(k.shape[1]):
                t = TWO_PI * (k[0, j] * xn + k[1, j] * yn + k[2, j] * zn)
                c = math.cos(t)
                s = math.sin(t)
                re += k[3, j] * c - k[4, j] * s
                im += k[4, j] * c + k[3, j] * s
            rFhD[n] = re
            iFhD[n] = im
    return fhd_const_chunk


def fhd_by_constant_chunks(scan: dict, chunk: int = 3072, threads: int = 256) -> dict:
    """F^H·d by one compiled kernel per chunk of ``chunk`` samples (5 · 3072 · 4 bytes = 60 KiB
    of the 64 KiB of constant memory): returns the kernels, the device outputs, and the seconds
    spent building and compiling them (the first launch of each compiles it)."""
    from numba import cuda as numba_cuda
    n, m = scan["x"].size, scan["kx"].size
    x, y, z = (numba_cuda.to_device(scan[k]) for k in ("x", "y", "z"))
    re = numba_cuda.to_device(np.zeros(n, np.float32))
    im = numba_cuda.to_device(np.zeros(n, np.float32))
    stacked = np.stack([scan[k] for k in ("kx", "ky", "kz", "rMu", "iMu")])
    t0 = time.perf_counter()
    kernels = []
    for base in range(0, m, chunk):
        kernel = const_chunk_kernel(stacked[:, base:base + chunk])
        kernel[(n + threads - 1) // threads, threads](x, y, z, re, im)     # compiles, then runs
        kernels.append(kernel)
    numba_cuda.synchronize()
    return {"kernels": kernels, "rFhD": re, "iFhD": im, "x": x, "y": y, "z": z,
            "compile_s": time.perf_counter() - t0}


# ---- timing ------------------------------------------------------------------------------------------

def time_cpu_fhd(size=(4096, 512), seed: int = 17) -> list[dict]:
    """The CPU baselines on a scan of ``size`` (N, M): label, ms, GFLOP/s, right (bool: both
    outputs within the bound at every voxel)."""
    from autograder.machine import timing
    scan = small_scan(*size, seed=seed)
    n = size[0]
    out = []
    for base in BASELINES.values():
        re, im = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
        stats = timing.time_cpu(base.label, lambda: base.run(
            rFhD=re, iFhD=im, **{k: scan[k] for k in NAMES}), repeats=3,
            nbytes=fhd_bytes(size), flops=fhd_flops(size))
        out.append({"label": base.label, "ms": stats.median_ms, "gflops": stats.gflops,
                    "right": within_bound((re, im), scan)})
    return out


def _sample_right(re, im, scan, fast: bool, seed: int = 1) -> bool:
    n = re.size
    idx = np.random.default_rng(seed).choice(n, size=min(1024, n), replace=False)
    args = {k: scan[k] for k in NAMES}
    ere, eim = fhd_sampled(**args, idx=idx)
    bound = fhd_bound(**args, trig=TRIG_FAST if fast else TRIG_PLAIN, idx=idx)
    return bool(np.all(np.abs(re[idx] - ere) <= bound) and np.all(np.abs(im[idx] - eim) <= bound))


def measure(kernels: dict | None = None, size=SPEED_SIZE, repeats: int = 10, seed: int = 17,
            scatter_fraction: int = 64, chunk: int = 3072) -> list[dict]:
    """Time F^H·d on a GPU for a scan of ``size`` (N voxels, M samples; the speed test's by
    default): the course's scatter with atomics (on M / ``scatter_fraction`` samples: it is that
    slow; the outputs zeroed on the device before each launch, inside the timed region), gather with libdevice's sin/cos, gather with fast sin/cos, the chunked shared-memory
    kernel (fast sin/cos), and one kernel per constant-memory chunk (its compile time reported
    apart), beside ``kernels``: ``{label: (kernel, fast)}``, kernels launched one thread per voxel
    as the checks launch them, ``fast`` saying which bound their values are checked against.
    Rows: label, ms, GFLOP/s (14 FLOPs a pair), right (bool: checked at 1024 voxels), note."""
    from autograder.machine import timing
    timing.require_gpu("Timing F^H·d")
    from numba import cuda
    n, m = (int(v) for v in size)
    scan = scan_inputs(np.random.default_rng(seed), (n, m))
    args = [cuda.to_device(scan[k]) for k in NAMES]
    re, im = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    poison = np.full(n, np.nan, np.float32)
    zeros = cuda.to_device(np.zeros(n, np.float32))      # device to device: no host copy timed
    blocks = (n + SPEED_BLOCK - 1) // SPEED_BLOCK
    out = []

    def record(label, launch, sizes, check, fast, note="", before=None):
        re.copy_to_device(poison)
        im.copy_to_device(poison)
        stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=fhd_bytes(sizes),
                                flops=fhd_flops(sizes))
        got = (re.copy_to_host(), im.copy_to_host())
        out.append({"label": label, "ms": stats.median_ms, "gflops": stats.gflops,
                    "right": _sample_right(*got, check, fast), "note": note})

    # The scatter: fewer samples, the outputs zeroed before every launch (its atomics add).
    ms = max(1, m // scatter_fraction)
    part = {**{k: scan[k][:ms] for k in ("kx", "ky", "kz", "rMu", "iMu")},
            **{k: scan[k] for k in ("x", "y", "z")}}
    part_args = [cuda.to_device(part[k]) for k in NAMES]
    scatter = reference_fhd_scatter()

    def scatter_launch(i):
        re.copy_to_device(zeros)
        im.copy_to_device(zeros)
        scatter[(ms + SPEED_BLOCK - 1) // SPEED_BLOCK, SPEED_BLOCK](*part_args, re, im)
    record(f"scatter, a thread per sample, atomics (course; M = {ms})", scatter_launch,
           (n, ms), part, False, note="zeroing the outputs included")

    runs = {"gather, a thread per voxel (course)": (reference_fhd_gather(), False),
            "gather, fastmath=True (course)": (reference_fhd_gather_fast(), True),
            "chunked in shared memory, fastmath=True (course)": (reference_fhd_chunked(), True)}
    runs.update(kernels or {})
    for label, (kernel, fast) in runs.items():
        record(label, lambda i, k=kernel: k[blocks, SPEED_BLOCK](*args, re, im), size, scan, fast)

    # Constant memory: one kernel per chunk, compiled once here (the compile time is the note).
    built = fhd_by_constant_chunks(scan, chunk=chunk, threads=SPEED_BLOCK)
    xyz = (built["x"], built["y"], built["z"])

    def const_launch(i):
        re.copy_to_device(zeros)
        im.copy_to_device(zeros)
        for kernel in built["kernels"]:
            kernel[blocks, SPEED_BLOCK](*xyz, re, im)
    record(f"constant memory, one kernel per chunk of {chunk} (libdevice sin/cos)", const_launch,
           size, scan, False, note=f"{len(built['kernels'])} kernels compiled in "
                                   f"{built['compile_s']:.2f} s before timing")
    return out


# ---- what sin and cos compile to ---------------------------------------------------------------------

@skipped_while_graded("The compiled sine and cosine")
def trig_code(kernel, compile_kernel, scan: dict | None = None) -> dict | None:
    """Compile ``kernel`` (launched one thread per voxel) for an H200 with ``compile_kernel``
    (the course's code viewer, ``ag.visual.compile_kernel``: no GPU needed, the CUDA toolkit
    wheels are) and pick out how it computes sine and cosine: the PTX lines of the hardware
    approximations, the SASS lines of the sine unit (``MUFU.SIN``/``MUFU.COS``) and of the
    argument's reduction (``FMUL.RZ`` by 1/(2π)), the PTX's length and the stack bytes
    (libdevice's slow path for large arguments keeps an array there). ``missing``: what to
    install, when the compiler is not here. None while the notebook is graded."""
    from numba import cuda as numba_cuda
    scan = scan or small_scan()
    n = scan["x"].size
    args = [numba_cuda.to_device(scan[k]) for k in NAMES]
    args += [numba_cuda.device_array(n, np.float32), numba_cuda.device_array(n, np.float32)]
    compiled = compile_kernel(kernel, *args)
    ptx = [line.strip() for line in compiled.ptx.splitlines()
           if ".approx" in line and ("sin" in line or "cos" in line)]
    sass = [line.split("*/", 1)[-1].strip() for line in compiled.sass.splitlines()
            if "MUFU.SIN" in line or "MUFU.COS" in line or "FMUL.RZ" in line]
    return {"ptx_approx": ptx, "sass_trig": sass, "ptx_lines": len(compiled.ptx.splitlines()),
            "stack_bytes": compiled.resources.stack_bytes, "registers": compiled.resources.registers,
            "missing": compiled.install_message() if compiled.missing else "",
            "error": compiled.error}


# ---- the fast sine's error, measured -------------------------------------------------------------------

def _scan_of_extent(rng, size, extent: float) -> dict:
    """A scan whose samples reach ±``extent`` cycles (θ up to about 3π·extent), μ of magnitude
    about 1."""
    n, m = size
    k = (extent * rng.uniform(-1, 1, (3, m))).astype(np.float32)
    v = rng.uniform(-0.5, 0.5, (3, n)).astype(np.float32)
    mu = rng.uniform(-1, 1, (2, m)).astype(np.float32)
    return {"kx": k[0], "ky": k[1], "kz": k[2], "x": v[0], "y": v[1], "z": v[2],
            "rMu": mu[0], "iMu": mu[1]}


def trig_errors(extents=(4.0, 24.0, 200.0), size=(8192, 2048), voxels: int = 512,
                seed: int = 17, kernels: dict | None = None) -> list[dict]:
    """On a GPU: how far the course's gather kernel with libdevice's sin/cos and with
    ``fastmath=True`` (and ``kernels``: ``{label: kernel}``) land from the float64 F^H·d, on scans
    whose samples reach ±extent cycles. Rows: label, extent, theta_max (the largest |θ|),
    error (the largest |error| over ``voxels`` voxels, per unit of Σ(|rMu| + |iMu|)), bound_used
    (the largest error / the bound of its kind: under 1 means within it). The simulator computes
    sine and cosine in float64 whatever fastmath says, so this needs a GPU."""
    from autograder.machine import timing
    timing.require_gpu("Measuring the fast sine's error")
    from numba import cuda
    runs = {"libdevice sin/cos": (reference_fhd_gather(), False),
            "fastmath=True": (reference_fhd_gather_fast(), True)}
    runs.update({label: (kernel, True) for label, kernel in (kernels or {}).items()})
    rng = np.random.default_rng(seed)
    n = size[0]
    idx = np.sort(rng.choice(n, size=min(voxels, n), replace=False))
    out = []
    for extent in extents:
        scan = _scan_of_extent(rng, size, extent)
        args = [cuda.to_device(scan[k]) for k in NAMES]
        exact, _ = fhd_sampled(**scan, idx=idx)
        weight = float(np.sum(np.abs(scan["rMu"].astype(np.float64))
                              + np.abs(scan["iMu"].astype(np.float64))))
        theta_max = float(2 * np.pi * sum(np.abs(scan[v]).max() * np.abs(scan[k]).max()
                                          for v, k in (("x", "kx"), ("y", "ky"), ("z", "kz"))))
        for label, (kernel, fast) in runs.items():
            re, im = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
            kernel[(n + SPEED_BLOCK - 1) // SPEED_BLOCK, SPEED_BLOCK](*args, re, im)
            err = np.abs(re.copy_to_host()[idx] - exact)
            bound = fhd_bound(**scan, trig=TRIG_FAST if fast else TRIG_PLAIN, idx=idx)
            out.append({"label": label, "extent": extent, "theta_max": theta_max,
                        "error": float(err.max() / weight),
                        "bound_used": float((err / bound).max())})
    return out


CHART = "ch17_measure"      # the measuring cell's recorded picture: h200_ch17_measure.json here
TRIG = "h200_ch17_trig"     # the fast sine's errors measured on the H200 (trig_errors' rows)


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): the rows of
    :func:`measure` that compute the whole scan as bars (the scatter's, on a part of the samples,
    is in its table only). Without a GPU, ``chart()`` names the course's own run of it instead,
    recorded on the H200 (``h200_ch17_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    n, m = SPEED_SIZE
    return {"name": CHART, "rows": [r for r in rows if not r["label"].startswith("scatter")],
            "title": f"F^H·d of {n:,} voxels and {m:,} samples"}
