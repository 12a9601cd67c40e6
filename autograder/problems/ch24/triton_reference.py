"""Exercise 24.4 written by the course: a row softmax in Triton, one program per row, the row in
one block of registers (its maximum by ``tl.max``, its sum by ``tl.sum``, both trees the compiler
builds), the padding lanes loaded as −inf, a fully masked row written as 0 (the chapter's rule).

This module imports Triton: only :func:`autograder.problems.ch24.reference_softmax_triton` imports
it, on first use, so that importing the course never needs Triton (it installs on Linux only).
Triton reads a kernel's source from its file, which is why the kernel lives in a module."""

from __future__ import annotations

import triton
import triton.language as tl

from autograder.machine.triton_bridge import view

MAX_COLS = 16384       # the longest row one block holds (64 floats a thread at 8 warps)


@triton.jit
def softmax_triton_reference_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=inside, other=-float("inf"))
    m = tl.max(x, axis=0)
    # A row of −inf only: m = −inf, and x − m would be −inf − (−inf) = NaN. Measured from 0
    # instead, every exp is exp(−inf) = 0, d is 0, and the row is written as 0.
    m = tl.where(m == -float("inf"), 0.0, m)
    e = tl.exp(x - m)
    d = tl.sum(e, axis=0)
    y = e / tl.where(d > 0.0, d, 1.0)
    tl.store(y_ptr + row * cols + offs, y, mask=inside)


def warps_for(block: int) -> int:
    """Warps a program: about 16 floats of the row a thread (4 for the shortest rows)."""
    return max(1, min(16, block // 512))


def softmax_triton_reference(x, y):
    """``y`` = the row softmax of ``x`` (float32 [rows, cols] device arrays of the course)."""
    rows, cols = x.shape
    if cols > MAX_COLS:
        raise ValueError(f"rows of up to {MAX_COLS} columns fit one block, not {cols}")
    if rows == 0 or cols == 0:
        return
    block = triton.next_power_of_2(cols)
    softmax_triton_reference_kernel[(rows,)](view(x), view(y), cols, BLOCK=block,
                                             num_warps=warps_for(block))
