"""Triton int4 products for tests/test_ch27.py: a right one (the notebook's solution) and plain
bugs of exercise 27.4, each with a launcher ``int4_matmul_triton(packed, scales, x, group, y)`` as
a learner writes it. Triton reads a kernel's source from its file, so they live in a module;
import it after ``autograder`` (which sets TRITON_INTERPRET in CPU mode). Defined outside the
course's package, they are the learner's code to the grader."""

import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def right(p_ptr, s_ptr, x_ptr, y_ptr, N, K, G, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
          HOW: tl.constexpr):
    """HOW: 0 right; 1 nibbles swapped; 2 no offset of 8; 3 the bytes up to K // 2 only (the
    odd column of an odd K dropped); 4 products and sums in float16."""
    b = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    nbytes = (K + 1) // 2
    ngroups = (K + G - 1) // G
    last = nbytes if HOW != 3 else K // 2
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    acc16 = tl.zeros([BLOCK_N], dtype=tl.float16)
    for start in range(0, last, BLOCK_K // 2):
        j = start + tl.arange(0, BLOCK_K // 2)
        ok = row_ok[:, None] & (j < last)[None, :]
        byte = tl.load(p_ptr + rows[:, None] * nbytes + j[None, :], mask=ok, other=0).to(tl.int32)
        s = tl.load(s_ptr + rows[:, None] * ngroups + (2 * j // G)[None, :], mask=ok, other=0.0)
        x0 = tl.load(x_ptr + b * K + 2 * j, mask=2 * j < K, other=0.0)
        x1 = tl.load(x_ptr + b * K + 2 * j + 1, mask=2 * j + 1 < K, other=0.0)
        lo = (byte & 15) - 8
        hi = (byte >> 4) - 8
        if HOW == 1:
            lo, hi = hi, lo
        if HOW == 2:
            lo = byte & 15
            hi = byte >> 4
        if HOW == 4:
            w0 = lo.to(tl.float16) * s
            w1 = hi.to(tl.float16) * s
            acc16 += tl.sum(w0 * x0[None, :] + w1 * x1[None, :], axis=1)
        else:
            w0 = lo.to(tl.float32) * s.to(tl.float32)
            w1 = hi.to(tl.float32) * s.to(tl.float32)
            acc += tl.sum(w0 * x0.to(tl.float32)[None, :] + w1 * x1.to(tl.float32)[None, :],
                          axis=1)
    if HOW == 4:
        acc = acc16.to(tl.float32)
    tl.store(y_ptr + b * N + rows, acc, mask=row_ok)


BUGS = {"right": 0, "swapped_nibbles": 1, "no_offset": 2, "odd_column_dropped": 3,
        "float16": 4}


def launcher(name: str):
    how = BUGS[name]

    def int4_matmul_triton(packed, scales, x, group, y):
        n = packed.shape[0]
        batch, k = x.shape
        right[(batch, triton.cdiv(n, 32))](view(packed), view(scales), view(x), view(y), n, k,
                                           group, BLOCK_N=32, BLOCK_K=128, HOW=how)
    return int4_matmul_triton
