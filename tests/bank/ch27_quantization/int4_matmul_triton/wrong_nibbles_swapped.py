# bank: unpacks column 2j from the high nibble and 2j + 1 from the low one; every output is wrong and the verdict names the nibble order; it must lose the points.
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
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, nbytes, BLOCK_K // 2):
        j = start + tl.arange(0, BLOCK_K // 2)
        ok = row_ok[:, None] & (j < nbytes)[None, :]
        byte = tl.load(p_ptr + rows[:, None] * nbytes + j[None, :], mask=ok, other=0).to(tl.int32)
        s = tl.load(s_ptr + rows[:, None] * ngroups + (2 * j // G)[None, :], mask=ok, other=0.0)
        x0 = tl.load(x_ptr + b * K + 2 * j, mask=2 * j < K, other=0.0).to(tl.float32)
        x1 = tl.load(x_ptr + b * K + 2 * j + 1, mask=2 * j + 1 < K, other=0.0).to(tl.float32)
        w0 = ((byte >> 4) - 8).to(tl.float32) * s.to(tl.float32)
        w1 = ((byte & 15) - 8).to(tl.float32) * s.to(tl.float32)
        acc += tl.sum(w0 * x0[None, :] + w1 * x1[None, :], axis=1)
    tl.store(y_ptr + b * N + rows, acc, mask=row_ok)


def int4_matmul_triton(packed, scales, x, group, y):
    n = packed.shape[0]
    batch, k = x.shape
    grid = (batch, triton.cdiv(n, 32))
    int4_matmul_triton_kernel[grid](view(packed), view(scales), view(x), view(y), n, k, group,
                                    BLOCK_N=32, BLOCK_K=128)
