"""Naive allclose harnesses for chapter 14's exercises (see :mod:`bank.naive`): typical
hand-written tests, fixed inputs, one small size, ``np.allclose(..., rtol=1e-3)``. Written the way
quick SpMV tests usually are: a square 64 × 64 matrix with 5 nonzeros in every row (no empty row,
no long row, so JDS keeps the rows in order), the expected result from the dense product
``a @ x``, one block of 64 threads (COO: one thread per nonzero, ``y`` zeroed by the test; a
warp per row: 16 blocks of 128 threads at warp size 32; hybrid: ELL width 3, two nonzeros a row
in COO). The ELL width: 1,000 power-law row lengths and the answer typed in."""

from __future__ import annotations

import numpy as np

import autograder  # noqa: F401  (picks the backend before numba.cuda loads)
from numba import cuda  # a module global: the CUDA simulator swaps only globals named `cuda`

N, PER_ROW = 64, 5


def _matrix():
    rng = np.random.default_rng(0)
    dense = np.zeros((N, N), np.float32)
    for i in range(N):
        cols = rng.choice(N, PER_ROW, replace=False)
        dense[i, np.sort(cols)] = rng.uniform(-1, 1, PER_ROW).astype(np.float32)
    x = rng.uniform(-1, 1, N).astype(np.float32)
    return dense, x, dense.astype(np.float64) @ x.astype(np.float64)


def _csr(dense):
    rows, cols = np.nonzero(dense)
    row_ptr = np.zeros(N + 1, np.int32)
    np.cumsum(np.bincount(rows, minlength=N), out=row_ptr[1:])
    return row_ptr, cols.astype(np.int32), dense[rows, cols].astype(np.float32), rows.astype(np.int32)


def _allclose_coo(kernel) -> bool:
    dense, x, expected = _matrix()
    _, col, val, row = _csr(dense)
    d_y = cuda.to_device(np.zeros(N, np.float32))
    kernel[(val.size + 63) // 64, 64](cuda.to_device(row), cuda.to_device(col),
                                      cuda.to_device(val), cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_csr(kernel) -> bool:
    dense, x, expected = _matrix()
    row_ptr, col, val, _ = _csr(dense)
    d_y = cuda.device_array(N, np.float32)
    kernel[1, 64](cuda.to_device(row_ptr), cuda.to_device(col), cuda.to_device(val),
                  cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_ell(kernel) -> bool:
    dense, x, expected = _matrix()
    e_col = np.zeros((PER_ROW, N), np.int32)                # column-major: slot t of row i at
    e_val = np.zeros((PER_ROW, N), np.float32)              # t * N + i
    for i in range(N):
        cols = np.nonzero(dense[i])[0]
        e_col[:, i], e_val[:, i] = cols, dense[i, cols]
    lengths = np.full(N, PER_ROW, np.int32)
    d_y = cuda.device_array(N, np.float32)
    kernel[1, 64](cuda.to_device(e_col.reshape(-1)), cuda.to_device(e_val.reshape(-1)),
                  cuda.to_device(lengths), cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_jds(kernel) -> bool:
    # Every row has 5 nonzeros: the sort keeps the rows in order (perm = 0 .. 63), and every
    # section is 64 long, as textbook examples with equal rows have it.
    dense, x, expected = _matrix()
    j_col = np.zeros((PER_ROW, N), np.int32)
    j_val = np.zeros((PER_ROW, N), np.float32)
    for i in range(N):
        cols = np.nonzero(dense[i])[0]
        j_col[:, i], j_val[:, i] = cols, dense[i, cols]
    perm = np.arange(N, dtype=np.int32)
    t_ptr = (np.arange(PER_ROW + 1) * N).astype(np.int32)
    d_y = cuda.device_array(N, np.float32)
    kernel[1, 64](cuda.to_device(perm), cuda.to_device(t_ptr), cuda.to_device(j_col.reshape(-1)),
                  cuda.to_device(j_val.reshape(-1)), cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_csr_vector(kernel) -> bool:
    # A warp of 32 per row, blocks of 128 threads: 64 rows fill 16 blocks exactly.
    dense, x, expected = _matrix()
    row_ptr, col, val, _ = _csr(dense)
    d_y = cuda.device_array(N, np.float32)
    kernel[N * 32 // 128, 128](cuda.to_device(row_ptr), cuda.to_device(col), cuda.to_device(val),
                               cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_hybrid(kernel) -> bool:
    # ELL width 3 (slots 0-2 of every row, column-major), the last 2 nonzeros of each row in
    # COO in row order; y zeroed, a thread per row and per COO nonzero, blocks of 64.
    dense, x, expected = _matrix()
    width = 3
    e_col = np.zeros((width, N), np.int32)
    e_val = np.zeros((width, N), np.float32)
    c_row, c_col, c_val = [], [], []
    for i in range(N):
        cols = np.nonzero(dense[i])[0]
        e_col[:, i], e_val[:, i] = cols[:width], dense[i, cols[:width]]
        c_row += [i] * (cols.size - width)
        c_col += cols[width:].tolist()
        c_val += dense[i, cols[width:]].tolist()
    lengths = np.full(N, width, np.int32)
    d_y = cuda.to_device(np.zeros(N, np.float32))
    nnz = len(c_val)
    kernel[(N + nnz + 63) // 64, 64](
        cuda.to_device(e_col.reshape(-1)), cuda.to_device(e_val.reshape(-1)),
        cuda.to_device(lengths), cuda.to_device(np.array(c_row, np.int32)),
        cuda.to_device(np.array(c_col, np.int32)), cuda.to_device(np.array(c_val, np.float32)),
        cuda.to_device(x), d_y)
    return bool(np.allclose(d_y.copy_to_host(), expected, rtol=1e-3))


def _allclose_hybrid_width(hybrid_width) -> bool:
    # Power-law row lengths of 1,000 rows as the chapter makes them; the answer typed in from a
    # worked example (3: 365 rows have 3 nonzeros or more, 280 have 4 or more).
    rng = np.random.default_rng(0)
    lengths = np.floor(3.0 * rng.pareto(1.5, 1000)).astype(np.int32)
    return int(hybrid_width(lengths)) == 3


HARNESS = {"spmv_coo": _allclose_coo, "spmv_csr": _allclose_csr, "spmv_ell": _allclose_ell,
           "spmv_jds": _allclose_jds, "spmv_csr_vector": _allclose_csr_vector,
           "spmv_hybrid": _allclose_hybrid, "hybrid_width": _allclose_hybrid_width}
