"""Correct and wrong submissions for chapters 1-2, shared by the CPU-mode and GPU tests.

Each entry: (problem, submission, expected) where expected is None for a correct submission, or a
fragment the verdict must contain (CPU mode; on a GPU only the failure itself is asserted, since
out-of-bounds writes show up as a guard-zone hit rather than an IndexError there).
"""

import numpy as np
from numba import cuda

import autograder as ag

ch01, ch02 = ag.problems.ch01, ag.problems.ch02


# ---- chapter 1 ----------------------------------------------------------------------------------

def amdahl_direct(p, s):
    return 1.0 / ((1.0 - p) + p / s)


def amdahl_cancelling(p, s):
    # Algebraically equal but cancels for p near 1: must still pass.
    return 1.0 / (1.0 - p * (1.0 - 1.0 / s))


def amdahl_inverted(p, s):
    return (1.0 - p) + p / s


def amdahl_float32(p, s):
    p, s = np.float32(p), np.float32(s)
    return float(np.float32(1) / ((np.float32(1) - p) + p / s))


@cuda.jit
def ids_grid(block, thread, index):
    i = cuda.grid(1)
    if i < index.size:
        block[i] = cuda.blockIdx.x
        thread[i] = cuda.threadIdx.x
        index[i] = i


@cuda.jit
def ids_fixed_block(block, thread, index):
    i = cuda.blockIdx.x * 128 + cuda.threadIdx.x   # assumes 128 threads per block
    if i < index.size:
        block[i] = cuda.blockIdx.x
        thread[i] = cuda.threadIdx.x
        index[i] = i


@cuda.jit
def ids_swapped(block, thread, index):
    i = cuda.grid(1)
    if i < index.size:
        block[i] = cuda.threadIdx.x
        thread[i] = cuda.blockIdx.x
        index[i] = i


@cuda.jit
def saxpy_ok(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_no_guard(a, x, y, out):
    i = cuda.grid(1)
    out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_wrong_order(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * y[i] + x[i]


# ---- chapter 2 ----------------------------------------------------------------------------------

@cuda.jit
def add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@cuda.jit
def add_kernel_le(x, y, out):
    i = cuda.grid(1)
    if i <= out.size:       # off by one: thread n writes past the end
        out[i] = x[i] + y[i]


@cuda.jit
def add_kernel_no_guard(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] + y[i]


@cuda.jit
def add_kernel_half(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = np.float16(x[i]) + np.float16(y[i])


def add_vectors_ok(x, y, out):
    add_kernel[(out.size + 255) // 256, 256](x, y, out)


def add_vectors_1024(x, y, out):
    add_kernel[(out.size + 1023) // 1024, 1024](x, y, out)


def add_vectors_grid_too_small(x, y, out):
    add_kernel[out.size // 256, 256](x, y, out)


def add_vectors_le(x, y, out):
    add_kernel_le[(out.size + 255) // 256 + 1, 256](x, y, out)


def add_vectors_no_guard(x, y, out):
    add_kernel_no_guard[(out.size + 255) // 256, 256](x, y, out)


def add_vectors_half(x, y, out):
    add_kernel_half[(out.size + 255) // 256, 256](x, y, out)


def add_vectors_visible_only(x, y, out):
    # Special-cases the visible sizes: computes only when n is one the notebook shows.
    if out.size in (1025, 1023, 1, 1_000_003):
        add_kernel[(out.size + 255) // 256, 256](x, y, out)


@cuda.jit
def grid_stride_ok(x, y, out):
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = x[i] + y[i]


@cuda.jit
def grid_stride_no_block_offset(x, y, out):
    # Starts at threadIdx.x in every block: blocks redo the same elements and leave gaps.
    for i in range(cuda.threadIdx.x, out.size, cuda.gridsize(1)):
        out[i] = x[i] + y[i]


@cuda.jit
def grid_stride_chunked(x, y, out):
    # Correct but uncoalesced: each thread owns a contiguous chunk (slow on a GPU).
    t, nthreads = cuda.grid(1), cuda.gridsize(1)
    chunk = (out.size + nthreads - 1) // nthreads
    for i in range(t * chunk, min((t + 1) * chunk, out.size)):
        out[i] = x[i] + y[i]


CASES = {
    "amdahl_direct": (ch01.amdahl, amdahl_direct, None),
    "amdahl_cancelling": (ch01.amdahl, amdahl_cancelling, None),
    "amdahl_inverted": (ch01.amdahl, amdahl_inverted, "elements are wrong"),
    "amdahl_float32": (ch01.amdahl, amdahl_float32, "elements are wrong"),
    "ids_grid": (ch01.thread_ids, ids_grid, None),
    "ids_fixed_block": (ch01.thread_ids, ids_fixed_block, "never written"),
    "ids_swapped": (ch01.thread_ids, ids_swapped, "elements are wrong"),
    "saxpy_ok": (ch01.saxpy, saxpy_ok, None),
    "saxpy_no_guard": (ch01.saxpy, saxpy_no_guard, "if i < n"),
    "saxpy_wrong_order": (ch01.saxpy, saxpy_wrong_order, "elements are wrong"),
    "add_vectors_ok": (ch02.vector_add, add_vectors_ok, None),
    "add_vectors_1024": (ch02.vector_add, add_vectors_1024, None),
    "add_vectors_grid_too_small": (ch02.vector_add, add_vectors_grid_too_small, "never written"),
    "add_vectors_le": (ch02.vector_add, add_vectors_le, "if i < n"),
    "add_vectors_no_guard": (ch02.vector_add, add_vectors_no_guard, "if i < n"),
    "add_vectors_half": (ch02.vector_add, add_vectors_half, "lower precision"),
    "add_vectors_visible_only": (ch02.vector_add, add_vectors_visible_only, "nothing was written"),
    "grid_stride_ok": (ch02.vector_add_grid_stride, grid_stride_ok, None),
    "grid_stride_chunked": (ch02.vector_add_grid_stride, grid_stride_chunked, None),
    "grid_stride_no_block_offset": (ch02.vector_add_grid_stride, grid_stride_no_block_offset,
                                    "never written"),
    "grid_stride_one_per_element": (ch02.vector_add_grid_stride, add_kernel, "never written"),
}
