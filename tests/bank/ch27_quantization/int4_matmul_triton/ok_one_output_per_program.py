# bank: one program per output y[b, n] (a grid of (B, N)), a 1-D loop over the row's columns 64 at a time, each column's byte loaded and its nibble chosen by the column's parity with tl.where, q·x summed and scaled per column: another correct order, full marks.
# naive: none
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def int4_matmul_triton_kernel(p_ptr, s_ptr, x_ptr, y_ptr, N, K, G, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    n = tl.program_id(1)
    nbytes = (K + 1) // 2
    ngroups = (K + G - 1) // G
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, K, BLOCK):
        c = start + tl.arange(0, BLOCK)
        ok = c < K
        byte = tl.load(p_ptr + n * nbytes + c // 2, mask=ok, other=0).to(tl.int32)
        q = tl.where(c % 2 == 0, byte & 15, byte >> 4) - 8
        s = tl.load(s_ptr + n * ngroups + c // G, mask=ok, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + b * K + c, mask=ok, other=0.0).to(tl.float32)
        acc += q.to(tl.float32) * s * x
    tl.store(y_ptr + b * N + n, tl.sum(acc, axis=0))


def int4_matmul_triton(packed, scales, x, group, y):
    n = packed.shape[0]
    batch, k = x.shape
    int4_matmul_triton_kernel[(batch, n)](view(packed), view(scales), view(x), view(y), n, k,
                                          group, BLOCK=64)
