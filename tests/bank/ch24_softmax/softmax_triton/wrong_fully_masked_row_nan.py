# bank: subtracts tl.max without a guard: right for every row with a finite value, but a row of -inf only computes -inf - (-inf) = NaN in every lane and writes NaN where the course's rule asks for 0; it must lose the points.
# naive: allclose
import triton
import triton.language as tl
from autograder.machine.triton_bridge import view


@triton.jit
def softmax_triton_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    inside = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=inside, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=inside)


def softmax_triton(x, y):
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    softmax_triton_kernel[(rows,)](view(x), view(y), cols, BLOCK=BLOCK)
