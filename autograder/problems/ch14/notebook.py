"""What chapter 14's notebook calls outside the graded cells: a small matrix in every format, the
row lengths of the three kinds of matrix drawn, the storage each format needs, the CPU baselines
timed, and the "measure it" cells (the formats and cuSPARSE timed on a GPU)."""

from __future__ import annotations

import numpy as np

from autograder.problems.ch10.specs import device_warp_size

from autograder.problems.ch14.references import (csr_vector_kernel, reference_coo,
                                                 reference_csr, reference_ell, reference_hybrid,
                                                 reference_jds)
from autograder.problems.ch14.specs import (BASELINES, KINDS, KIND_LABELS, SPEED_ROWS,
                                            best_width, csr_bytes, csr_sample, csr_to_coo,
                                            csr_to_ell, csr_to_hybrid, csr_to_jds, hybrid_bytes,
                                            hybrid_cost,
                                            make_matrix, run_hybrid, speed_matrix, spmv_host,
                                            storage_bytes, row_of_each)


# ---- a small matrix, and the three kinds ----------------------------------------------------------

def small_example() -> dict:
    """A 5 × 6 matrix with an empty row and a long row, dense and in CSR (columns sorted here)."""
    dense = np.array([[3, 0, 1, 0, 0, 0],
                      [0, 0, 0, 0, 0, 0],
                      [0, 2, 4, 1, 0, 5],
                      [0, 0, 0, 0, 7, 0],
                      [1, 0, 0, 0, 0, 2]], np.float32)
    rows, cols = np.nonzero(dense)
    row_ptr = np.zeros(dense.shape[0] + 1, np.int32)
    np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=row_ptr[1:])
    return {"dense": dense, "row_ptr": row_ptr, "col": cols.astype(np.int32),
            "val": dense[rows, cols].astype(np.float32),
            "x": np.arange(1, dense.shape[1] + 1, dtype=np.float32)}


def plot_row_lengths(rows: int = 2000, seed: int = 14, ax=None):
    """The row lengths of the three kinds of matrix with ``rows`` rows, as histograms (log
    counts), with the longest row marked: how even each kind is decides the format."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(1, 3, figsize=(11, 2.8))
    for a, kind in zip(ax, KINDS):
        m = make_matrix(np.random.default_rng(seed), rows, kind)
        lengths = np.diff(m["row_ptr"])
        a.hist(lengths, bins=np.arange(lengths.max() + 2) - 0.5, color="#4477aa")
        a.set_yscale("log")
        a.set_title(f"{KIND_LABELS[kind]}\nmean {lengths.mean():.1f}, longest {lengths.max()}",
                    fontsize=9)
        a.set_xlabel("nonzeros in a row")
    ax[0].set_ylabel("rows")
    return ax


def storage_table(rows: int = 2000, seed: int = 14) -> list[dict]:
    """For each kind of matrix with ``rows`` rows: nnz, the longest row, and the bytes COO, CSR,
    ELL (its padding included) and JDS store, with ELL's slots over the nonzeros."""
    out = []
    for kind in KINDS:
        m = make_matrix(np.random.default_rng(seed), rows, kind)
        s = storage_bytes(m["row_ptr"])
        s["kind"] = KIND_LABELS[kind]
        s["ell_slots_per_nonzero"] = s["rows"] * s["width"] / max(s["nnz"], 1)
        out.append(s)
    return out


def width_table(width_of=None, rows: int = 2000, seed: int = 14) -> list[dict]:
    """For each kind of matrix with ``rows`` rows: the hybrid's ELL width K (``width_of(lengths)``,
    the learner's function, or the course's choice), its cost in ELL slots (:func:`hybrid_cost`)
    against plain ELL's (K = the longest row), its bytes (:func:`hybrid_bytes`, with the 4-byte
    ``ell_len`` of each row) against plain ELL's and CSR's, and the share of the nonzeros left to
    COO."""
    out = []
    for kind in KINDS:
        m = make_matrix(np.random.default_rng(seed), rows, kind)
        lengths = np.diff(m["row_ptr"])
        width = int(width_of(lengths.copy()) if width_of else best_width(lengths))
        s = storage_bytes(m["row_ptr"])
        out.append({"kind": KIND_LABELS[kind], "rows": rows, "nnz": s["nnz"],
                    "longest": s["width"], "width": width,
                    "cost": hybrid_cost(lengths, width),
                    "ell_cost": hybrid_cost(lengths, s["width"]),
                    "hybrid": hybrid_bytes(lengths, width) + 4 * rows,
                    "coo_share": float(np.maximum(lengths - width, 0).sum() / max(s["nnz"], 1)),
                    "ell": s["ell"], "csr": s["csr"]})
    return out


# ---- timing ---------------------------------------------------------------------------------------

def time_cpu_spmv(rows: int, seed: int = 3) -> list[dict]:
    """The CPU baselines on the speed test's kind of matrix with ``rows`` rows: label, ms, GB/s
    (the bytes a CSR SpMV must move), right (bool: y checked at 4096 rows)."""
    from autograder.machine import timing
    m = speed_matrix(np.random.default_rng(seed), rows)
    y = np.empty(rows, np.float32)
    idx = np.sort(np.random.default_rng(seed + 1).choice(rows, size=min(4096, rows),
                                                         replace=False))
    expected, tol = csr_sample(m, idx)
    out = []
    for base in BASELINES.values():
        y[:] = np.nan
        stats = timing.time_cpu(base.label, lambda: base.run(y=y, **m), repeats=3,
                                nbytes=csr_bytes(rows))
        out.append({"label": base.label, "ms": stats.median_ms, "gbps": stats.gbps,
                    "right": bool(np.all(np.abs(y[idx] - expected["y"]) <= tol["y"]))})
    return out


def _device_formats(m: dict):
    """The matrix ``m`` (CSR, with x) on the device in CSR, COO, ELL, JDS and hybrid ELL + COO
    (the course's width)."""
    from numba import cuda
    row, col, val = csr_to_coo(m["row_ptr"], m["col"], m["val"])
    e_col, e_val, e_len, width = csr_to_ell(m["row_ptr"], m["col"], m["val"])
    perm, t_ptr, j_col, j_val = csr_to_jds(m["row_ptr"], m["col"], m["val"])
    hybrid = csr_to_hybrid(m["row_ptr"], m["col"], m["val"], best_width(np.diff(m["row_ptr"])),
                           np.random.default_rng(0))
    d = {name: cuda.to_device(np.ascontiguousarray(a)) for name, a in
         (("row_ptr", m["row_ptr"]), ("col", m["col"]), ("val", m["val"]), ("x", m["x"]),
          ("row", row), ("e_col", e_col), ("e_val", e_val), ("e_len", e_len), ("perm", perm),
          ("t_ptr", t_ptr), ("j_col", j_col), ("j_val", j_val))
         + tuple(zip(("h_col", "h_val", "h_len", "h_row", "h_ccol", "h_cval"), hybrid))}
    return d, width


def measure(kernels: dict | None = None, rows: int = SPEED_ROWS, repeats: int = 20,
            seed: int = 14, kinds=("speed",) + KINDS) -> list[dict]:
    """Time SpMV in each format on a GPU, on the speed test's matrix (``"speed"``: 16 nonzeros a
    row on average, from 4 to 28) and the chapter's three kinds, each with ``rows`` rows.

    ``kernels`` maps a label to ``(format, kernel)``, format ``"coo"``, ``"csr"``,
    ``"csr_vector"`` (a warp per row), ``"ell"``, ``"hybrid"`` (ELL + COO in one launch, y zeroed
    first) or ``"jds"`` (the learner's); the course's kernels and cuSPARSE (where CuPy is
    installed) are timed beside them. Rows: matrix, label, ms, GB/s (the bytes the format stores,
    plus x and y once), right (bool: y checked at 2048 rows)."""
    from autograder.machine import timing
    timing.require_gpu("Timing SpMV")
    from numba import cuda
    from autograder.problems.ch09.references import zero
    runs = {"COO (course)": ("coo", reference_coo()), "CSR (course)": ("csr", reference_csr()),
            "CSR, a warp per row (course)": ("csr_vector", csr_vector_kernel()),
            "ELL (course)": ("ell", reference_ell()),
            "hybrid ELL + COO (course)": ("hybrid", reference_hybrid()),
            "JDS (course)": ("jds", reference_jds())}
    runs.update(kernels or {})
    out = []
    for kind in kinds:
        rng = np.random.default_rng(seed)
        m = speed_matrix(rng, rows) if kind == "speed" else make_matrix(rng, rows, kind)
        if kind != "speed":
            m["x"] = rng.standard_normal(m["cols"], dtype=np.float32)
        d, width = _device_formats(m)
        sizes = storage_bytes(m["row_ptr"])
        if sizes["ell"] > 8 << 30:
            width = 0                                     # ELL would not fit: skip it
        y = cuda.device_array(rows, np.float32)
        idx = np.sort(np.random.default_rng(1).choice(rows, size=min(2048, rows), replace=False))
        expected, tol = csr_sample(m, idx)
        extra = 4 * m["x"].size + 4 * rows
        label_kind = "speed test's matrix" if kind == "speed" else KIND_LABELS[kind]
        for label, (fmt, kernel) in runs.items():
            if fmt == "ell" and not width:
                continue
            if fmt == "coo":
                nnz = sizes["nnz"]

                def launch(i, kernel=kernel, nnz=nnz):
                    zero(y)
                    kernel[-(-nnz // 256), 256](d["row"], d["col"], d["val"], d["x"], y)
            elif fmt == "csr":
                def launch(i, kernel=kernel):
                    kernel[-(-rows // 256), 256](d["row_ptr"], d["col"], d["val"], d["x"], y)
            elif fmt == "csr_vector":
                lanes = device_warp_size()

                def launch(i, kernel=kernel, lanes=lanes):
                    kernel[-(-rows * lanes // 256), 256](d["row_ptr"], d["col"], d["val"],
                                                         d["x"], y)
            elif fmt == "hybrid":
                def launch(i, kernel=kernel):
                    run_hybrid(kernel, d["h_col"], d["h_val"], d["h_len"], d["h_row"],
                               d["h_ccol"], d["h_cval"], d["x"], y, threads=256)
            elif fmt == "ell":
                def launch(i, kernel=kernel):
                    kernel[-(-rows // 256), 256](d["e_col"], d["e_val"], d["e_len"], d["x"], y)
            else:
                def launch(i, kernel=kernel):
                    kernel[-(-rows // 256), 256](d["perm"], d["t_ptr"], d["j_col"], d["j_val"],
                                                 d["x"], y)
            if fmt == "hybrid":
                stored = hybrid_bytes(np.diff(m["row_ptr"]), d["h_col"].size // rows) + 4 * rows
            else:
                stored = sizes["csr" if fmt.startswith("csr") else fmt]
            stats = timing.time_gpu(label, launch, repeats=repeats, nbytes=stored + extra)
            got = y.copy_to_host()[idx]
            out.append({"matrix": label_kind, "label": label, "ms": stats.median_ms,
                        "gbps": stats.gbps,
                        "right": bool(np.all(np.abs(got - expected["y"]) <= tol["y"]))})
        try:
            import cupy as cp
            from cupyx.scipy import sparse
        except ImportError:
            continue
        a = sparse.csr_matrix((cp.asarray(d["val"]), cp.asarray(d["col"]),
                               cp.asarray(d["row_ptr"])), shape=(rows, m["x"].size))
        cx = cp.asarray(d["x"])
        result = {}

        def vendor(i):
            result["y"] = a @ cx
        stats = timing.time_gpu("cuSPARSE", vendor, repeats=repeats,
                                nbytes=sizes["csr"] + extra)
        got = cp.asnumpy(result["y"])[idx]
        out.append({"matrix": label_kind, "label": VENDOR_SPMV,
                    "ms": stats.median_ms, "gbps": stats.gbps,
                    "right": bool(np.all(np.abs(got - expected["y"]) <= tol["y"]))})
    return out


def check_small(kernel, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """Run a learner's kernel of format ``fmt`` (``"coo"``, ``"csr"``, ``"csr_vector"``,
    ``"ell"``, ``"hybrid"`` or ``"jds"``) on :func:`small_example`: one block of 32 threads (a warp
    per row for ``"csr_vector"``, ELL width 2 for ``"hybrid"``); return (y, dense @ x)."""
    from numba import cuda
    from autograder.problems.ch09.references import zero
    m = small_example()
    rows = m["dense"].shape[0]
    y = cuda.device_array(rows, np.float32)
    x = cuda.to_device(m["x"])
    if fmt == "coo":
        row, col, val = csr_to_coo(m["row_ptr"], m["col"], m["val"])
        zero(y)
        kernel[1, 32](cuda.to_device(row), cuda.to_device(col), cuda.to_device(val), x, y)
    elif fmt == "csr":
        kernel[1, 32](cuda.to_device(m["row_ptr"]), cuda.to_device(m["col"]),
                      cuda.to_device(m["val"]), x, y)
    elif fmt == "csr_vector":
        lanes = device_warp_size()
        kernel[rows, lanes](cuda.to_device(m["row_ptr"]), cuda.to_device(m["col"]),
                            cuda.to_device(m["val"]), x, y)
    elif fmt == "ell":
        e_col, e_val, e_len, _ = csr_to_ell(m["row_ptr"], m["col"], m["val"])
        kernel[1, 32](cuda.to_device(e_col), cuda.to_device(e_val), cuda.to_device(e_len), x, y)
    elif fmt == "hybrid":
        parts = csr_to_hybrid(m["row_ptr"], m["col"], m["val"], 2, np.random.default_rng(0))
        run_hybrid(kernel, *(cuda.to_device(a) for a in parts), x, y, threads=32)
    else:
        perm, t_ptr, j_col, j_val = csr_to_jds(m["row_ptr"], m["col"], m["val"])
        kernel[1, 32](cuda.to_device(perm), cuda.to_device(t_ptr), cuda.to_device(j_col),
                      cuda.to_device(j_val), x, y)
    expected, _, _ = spmv_host(row_of_each(m["row_ptr"]), m["col"], m["val"], m["x"], rows)
    return y.copy_to_host(), expected


CHART = "ch14_measure"      # the measuring cell's recorded picture: h200_ch14_measure.json here
VENDOR_SPMV = "cupyx.scipy.sparse CSR @ x (cuSPARSE)"


def chart(rows: list[dict] | None = None) -> dict:
    """What the measuring cell draws (``ag.experiments.steps(**chart(rows))``): the formats timed
    on the speed test's matrix (the rows of :func:`measure` for the other matrices are in its
    table), cuSPARSE as a line. Without a GPU, ``chart()`` names the course's own run of it
    instead, recorded on the H200 (``h200_ch14_measure.json`` in this folder)."""
    if rows is None:
        return {"name": CHART}
    mine = [r for r in rows if r.get("matrix") == "speed test's matrix"]
    vendor = VENDOR_SPMV if any(r["label"] == VENDOR_SPMV for r in mine) else None
    return {"name": CHART, "rows": mine, "reference": vendor,
            "title": f"SpMV on the speed test's matrix, {SPEED_ROWS:,} rows"}
