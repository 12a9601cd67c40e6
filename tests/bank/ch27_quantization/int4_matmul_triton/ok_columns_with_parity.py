# bank: programs over (activation row, block of 16 output rows), 128 columns a step: each column's byte (c // 2) loaded and its nibble picked by the column's parity with tl.where, the scale at c // G, x at the columns themselves, a float32 tile accumulated over the steps and summed once at the end: another correct order, full marks.
# naive: none
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def int4_matmul_triton_kernel(p_ptr, s_ptr, x_ptr, y_ptr, N, K, G,
                              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    nbytes = (K + 1) // 2
    ngroups = (K + G - 1) // G
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        c = start + tl.arange(0, BLOCK_K)
        ok = row_ok[:, None] & (c < K)[None, :]
        byte = tl.load(p_ptr + rows[:, None] * nbytes + (c // 2)[None, :], mask=ok,
                       other=0).to(tl.int32)
        q = tl.where((c % 2 == 0)[None, :], byte & 15, byte >> 4) - 8
        s = tl.load(s_ptr + rows[:, None] * ngroups + (c // G)[None, :], mask=ok, other=0.0)
        x = tl.load(x_ptr + b * K + c, mask=c < K, other=0.0).to(tl.float32)
        acc += q.to(tl.float32) * s.to(tl.float32) * x[None, :]
    tl.store(y_ptr + b * N + rows, tl.sum(acc, axis=1), mask=row_ok)


def int4_matmul_triton(packed, scales, x, group, y):
    n = packed.shape[0]
    batch, k = x.shape
    grid = (batch, triton.cdiv(n, 16))
    int4_matmul_triton_kernel[grid](view(packed), view(scales), view(x), view(y), n, k, group,
                                    BLOCK_N=16, BLOCK_K=128)
