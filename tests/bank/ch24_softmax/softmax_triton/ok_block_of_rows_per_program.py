# bank: a 2-D block per program: ROWS rows of BLOCK columns, the last program's extra rows masked too, tl.max and tl.sum along axis 1, the reciprocal of d multiplied in, and a fully masked row zeroed by a tl.where on its maximum; correct, full marks.
# naive: none
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, rows, cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    ptrs = r[:, None] * cols + c[None, :]
    x = tl.load(x_ptr + ptrs, mask=mask, other=float("-inf"))
    m = tl.max(x, axis=1)
    empty = m == float("-inf")
    e = tl.exp(x - tl.where(empty, 0.0, m)[:, None])
    d = tl.sum(e, axis=1)
    inv = tl.where(empty, 0.0, 1.0 / tl.where(empty, 1.0, d))
    tl.store(y_ptr + ptrs, e * inv[:, None], mask=mask)


def softmax_triton(x, y):
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    ROWS = max(1, min(8, 1024 // BLOCK))
    grid = (triton.cdiv(rows, ROWS),)
    softmax_triton_kernel[grid](view(x), view(y), rows, cols, ROWS=ROWS, BLOCK=BLOCK,
                                num_warps=4 if BLOCK <= 2048 else 8)
