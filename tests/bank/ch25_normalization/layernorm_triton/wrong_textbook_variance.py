# bank: one block per row with σ² = E[x²] − E[x]² (clamped at 0): right on centred data, but the rows with a large offset lose the whole variance to cancellation; a hand-written test on values in [0, 1) passes it; it must lose the points.
# naive: allclose
import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def layernorm_triton_kernel(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    var = tl.maximum(tl.sum(x * x, axis=0) / n - mean * mean, 0.0)
    rstd = tl.rsqrt(var + eps)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, (x - mean) * rstd * gamma + beta, mask=mask)


def layernorm_triton(x, gamma, beta, eps, y):
    rows, n = x.shape
    block = triton.next_power_of_2(n)
    layernorm_triton_kernel[(rows,)](view(x), view(gamma), view(beta), view(y), n, eps,
                                     BLOCK=block)
