"""What chapter 18's notebook calls outside the graded cells: a small slice, the scatter kernel run
with its output race-checked (CPU mode), the cutoff's error against the full sum, the CPU
baselines timed, and the "measure it" cell (scatter, gather, coarsened both layouts, cutoff at
several radii, on a GPU)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch18.references import (reference_coarsened,
                                                 reference_coarsened_consecutive,
                                                 reference_cutoff, reference_gather,
                                                 reference_scatter)
from autograder.problems.ch18.specs import (BASELINES, SPEED_BLOCK, SPEED_SLICE, bin_atoms,
                                            bins_for, potential_at, potential_host,
                                            random_atoms, slice_bytes, slice_flops)


def small_slice(size=(6, 10, 8), seed: int = 18, h: float = 0.5) -> dict:
    """A slice of ``size`` (ny, nx, A) with h = 0.5 and the plane at z = 0: atoms (float32
    [A, 4]), h, z, and V and its error bound in float64."""
    rng = np.random.default_rng(seed)
    ny, nx, A = size
    atoms = random_atoms(rng, A, ny, nx, h, 0.0)
    V, tol = potential_host(atoms, h, 0.0, ny, nx)
    return {"atoms": atoms, "h": np.float32(h), "z": np.float32(0.0), "V": V, "tol": tol}


def run_scatter(kernel, size=(6, 10, 8), seed: int = 18, threads: int = 1) -> dict:
    """Launch a scatter kernel ``kernel[blocks, threads](atoms, V, h, z)`` (a thread per atom) on
    :func:`small_slice` with V zeroed. In CPU mode V is race-checked: two threads updating one
    element with plain reads and writes stop the launch (GlobalMemoryRace). Returns the slice
    with ``got``, what the kernel stored, and ``right`` (within the bound everywhere). One thread
    per block by default: every pair of atoms is then in different blocks, which no barrier
    orders, and the race detector's message says so."""
    from numba import cuda

    from autograder.machine import device
    s = small_slice(size, seed)
    V = np.zeros(s["V"].shape, np.float32)
    if not device.current().is_gpu:
        from autograder.machine.simulator import races
        V = races.track_outputs({"V": V}, what="the potential")["V"]
    else:
        V = cuda.to_device(V)
    blocks = (len(s["atoms"]) + threads - 1) // threads
    kernel[blocks, threads](cuda.to_device(s["atoms"]), V, s["h"], s["z"])
    got = np.asarray(V) if not hasattr(V, "copy_to_host") else V.copy_to_host()
    s["got"] = np.array(got, np.float32)
    s["right"] = bool(np.all(np.abs(s["got"] - s["V"]) <= s["tol"]))
    return s


def cutoff_error(kernel=None, radii=(1.0, 2.0, 4.0, 8.0), size=(16, 24, 150), seed: int = 18,
                 block=(8, 4)) -> list[dict]:
    """The cutoff potential against the full sum on one slice (h = 0.5, atoms over the slice),
    for each cutoff radius (bins as wide as the cutoff): rows of radius, the largest error as a
    fraction of the largest |V|, the root-mean-square error as a fraction of V's, and the atoms
    each point summed on average. ``kernel``: a cutoff kernel of Exercise 18.3 (the course's by
    default)."""
    from numba import cuda
    kernel = kernel or reference_cutoff()
    rng = np.random.default_rng(seed)
    ny, nx, A = size
    h, z = np.float32(0.5), np.float32(0.0)
    atoms = random_atoms(rng, A, ny, nx, h, z, margin=0.0)
    full, _ = potential_host(atoms, h, z, ny, nx)
    rows = []
    for rc in radii:
        rc = np.float32(rc)
        nby, nbx = bins_for(ny, nx, h, rc)
        binned, start = bin_atoms(atoms, rc, nbx, nby)
        V = cuda.device_array((ny, nx), np.float32)
        blocks = ((nx + block[0] - 1) // block[0], (ny + block[1] - 1) // block[1])
        kernel[blocks, block](cuda.to_device(binned), cuda.to_device(start), V, h, z, rc, rc)
        got = V.copy_to_host().astype(np.float64)
        j, i = np.indices((ny, nx))
        pa = np.stack([i.ravel() * float(h), j.ravel() * float(h)], 1)
        d = np.sqrt(((pa[:, None, :] - atoms[None, :, :2]) ** 2).sum(-1)
                    + (float(z) - atoms[None, :, 2]) ** 2)
        rows.append({"radius": float(rc),
                     "max_error": float(np.abs(got - full).max() / np.abs(full).max()),
                     "rms_error": float(np.sqrt(np.mean((got - full) ** 2) / np.mean(full ** 2))),
                     "atoms_per_point": float((d < rc).sum(1).mean())})
    return rows


def time_cpu_potential(size=(64, 64, 1000), seed: int = 18) -> list[dict]:
    """The CPU baselines on a slice of ``size``: label, ms, GFLOP/s (11 FLOPs per pair), right
    (V checked at 256 sampled points)."""
    from autograder.machine import timing
    s = _measure_slice(np.random.default_rng(seed), size)
    V = np.empty(size[:2], np.float32)
    out = []
    for base in BASELINES.values():
        V[:] = np.nan
        stats = timing.time_cpu(base.label, lambda b=base: b.run(atoms=s["atoms"], h=s["h"],
                                                                 z=s["z"], V=V),
                                repeats=3, nbytes=slice_bytes(size), flops=slice_flops(size))
        out.append({"label": base.label, "ms": stats.median_ms, "gflops": stats.gflops,
                    "right": _sample_right(V, s)})
    return out


# ---- measuring on a GPU ---------------------------------------------------------------------------

CHART = "ch18_measure"      # the measuring cell's recorded picture: h200_ch18_measure.json here


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): the rows of
    :func:`measure` on the speed test's slice as bars (the scatter's smaller slice is in its
    table only). Without a GPU, ``chart()`` names the course's own run of it instead, recorded on
    the H200 (``h200_ch18_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    ny, nx, atoms = SPEED_SLICE
    return {"name": CHART, "rows": [r for r in rows if tuple(r["size"]) == tuple(SPEED_SLICE)],
            "title": f"Potential of {atoms:,} atoms on a {ny} × {nx} slice"}


def _measure_slice(rng, size, h: float = 0.5) -> dict:
    ny, nx, A = size
    return {"atoms": random_atoms(rng, A, ny, nx, h, 0.0, margin=0.0),
            "h": np.float32(h), "z": np.float32(0.0)}


def _sample_right(got: np.ndarray, s: dict, cutoff=None, seed: int = 1, count: int = 512) -> bool:
    ny, nx = got.shape
    idx = np.random.default_rng(seed).choice(got.size, size=min(count, got.size), replace=False)
    j, i = np.unravel_index(idx, (ny, nx))
    V, tol = potential_at(s["atoms"], s["h"], s["z"], j, i, cutoff, step=64)
    return bool(np.all(np.abs(got[j, i] - V) <= tol))


def measure(kernels: dict | None = None, size=SPEED_SLICE, radii=(4.0, 8.0, 12.0),
            coarsen: int = 4, scatter_size=(256, 256, 2000), repeats: int = 10,
            seed: int = 18) -> list[dict]:
    """Time the chapter's ways of computing a slice on a GPU: the scatter form with atomics (on
    the smaller ``scatter_size``: it is slow), gather, coarsened by ``coarsen`` with a thread's
    points next to each other and a block-width apart, and the cutoff at each of ``radii``
    (bins as wide as the cutoff), beside ``kernels``: ``{label: (kind, kernel)}`` with kind
    ``"gather"``, ``"coarsened"`` (called with ``coarsen``) or ``"cutoff"`` (called at each
    radius). Slice ``size`` (ny, nx, atoms), h = 0.5, atoms over the slice. Rows: label, size,
    ms, GFLOP/s (11 FLOPs per pair of the full sum, so a cutoff's figure is "as fast as a full
    sum at"), right (bool: V checked at 512 points against its own sum)."""
    from autograder.machine import timing
    timing.require_gpu("Timing the potential map")
    from numba import cuda
    rng = np.random.default_rng(seed)
    ny, nx, A = size
    s = _measure_slice(rng, size)
    d_atoms = cuda.to_device(s["atoms"])
    V = cuda.device_array((ny, nx), np.float32)
    poison = np.full((ny, nx), np.nan, np.float32)
    bx, by = SPEED_BLOCK
    grid = ((nx + bx - 1) // bx, (ny + by - 1) // by)
    coarse_grid = ((nx + bx * coarsen - 1) // (bx * coarsen), grid[1])
    out = []

    def record(label, launch, cutoff=None):
        V.copy_to_device(poison)
        stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=slice_bytes(size),
                                flops=slice_flops(size))
        out.append({"label": label, "size": tuple(size), "ms": stats.median_ms,
                    "gflops": stats.gflops, "right": _sample_right(V.copy_to_host(), s, cutoff)})

    # Scatter: every launch adds into V, so V is zeroed before each timed launch's series and
    # checked once, after a single launch.
    ss = _measure_slice(np.random.default_rng(seed + 1), scatter_size)
    sV = cuda.device_array(scatter_size[:2], np.float32)
    s_atoms = cuda.to_device(ss["atoms"])
    scatter = reference_scatter()
    sb = (scatter_size[2] + 127) // 128
    stats = timing.time_gpu("scatter", lambda i: scatter[sb, 128](s_atoms, sV, ss["h"], ss["z"]),
                            repeats=repeats, flops=slice_flops(scatter_size))
    sV.copy_to_device(np.zeros(scatter_size[:2], np.float32))
    scatter[sb, 128](s_atoms, sV, ss["h"], ss["z"])
    out.append({"label": "scatter: a thread per atom, atomic adds (course)",
                "size": tuple(scatter_size), "ms": stats.median_ms, "gflops": stats.gflops,
                "right": _sample_right(sV.copy_to_host(), ss)})

    runs = {"gather: a thread per point (course)": ("gather", reference_gather()),
            f"coarsened ×{coarsen}, points side by side (course)":
                ("coarsened", reference_coarsened_consecutive()),
            f"coarsened ×{coarsen}, points a block apart (course)":
                ("coarsened", reference_coarsened()),
            "cutoff over bins (course)": ("cutoff", reference_cutoff())}
    runs.update(kernels or {})
    binned = {}
    for rc in radii:
        nby, nbx = bins_for(ny, nx, s["h"], rc)
        atoms_b, start = bin_atoms(s["atoms"], rc, nbx, nby)
        binned[rc] = (cuda.to_device(atoms_b), cuda.to_device(start))
    for label, (kind, kernel) in runs.items():
        if kind == "gather":
            record(label, lambda i, k=kernel: k[grid, SPEED_BLOCK](d_atoms, V, s["h"], s["z"]))
        elif kind == "coarsened":
            record(label, lambda i, k=kernel: k[coarse_grid, SPEED_BLOCK](
                d_atoms, V, s["h"], s["z"], coarsen))
        elif kind == "cutoff":
            for rc in radii:
                a_b, start = binned[rc]
                record(f"{label}, cutoff {rc:g}",
                       lambda i, k=kernel, a=a_b, b=start, r=np.float32(rc):
                       k[grid, SPEED_BLOCK](a, b, V, s["h"], s["z"], r, r), cutoff=rc)
        else:
            raise ValueError(f"{label}: the kind is 'gather', 'coarsened' or 'cutoff', not "
                             f"{kind!r}")
    return out
