# bank: several rows per program on a two-dimensional block (ROWS × BLOCK), masked along both axes, the row statistics by tl.sum(axis=1) and broadcast back with [:, None]; grid = cdiv(rows, ROWS); correct, full marks.
# naive: none
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view

ROWS = 4


@triton.jit
def layernorm_rows_2d(x_ptr, g_ptr, b_ptr, y_ptr, rows, n, eps, ROWS: tl.constexpr,
                      BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    inside = (r[:, None] < rows) & (c[None, :] < n)
    offsets = r[:, None] * n + c[None, :]
    x = tl.load(x_ptr + offsets, mask=inside, other=0.0)
    mean = tl.sum(x, axis=1) / n
    dev = tl.where(inside, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(dev * dev, axis=1) / n + eps)
    g = tl.load(g_ptr + c, mask=c < n, other=0.0)
    b = tl.load(b_ptr + c, mask=c < n, other=0.0)
    tl.store(y_ptr + offsets, dev * rstd[:, None] * g[None, :] + b[None, :], mask=inside)


def layernorm_triton(x, gamma, beta, eps, y):
    rows, n = x.shape
    layernorm_rows_2d[(triton.cdiv(rows, ROWS),)](view(x), view(gamma), view(beta), view(y),
                                                  rows, n, eps, ROWS=ROWS,
                                                  BLOCK=triton.next_power_of_2(n))
