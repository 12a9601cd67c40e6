"""Triton LayerNorms for tests/test_ch25.py: a right one (the notebook's solution) and the plain
bugs of exercise 25.4, each with a launcher ``layernorm_triton(x, gamma, beta, eps, y)`` as a
learner writes it. Triton reads a kernel's source from its file, so they live in a module; import
it after ``autograder`` (which sets TRITON_INTERPRET in CPU mode). Defined outside the course's
package, they are the learner's code to the grader."""

import triton
import triton.language as tl

from autograder.machine.triton_bridge import view


@triton.jit
def right(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n + eps)
    g = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
    b = tl.load(beta_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, d * rstd * g + b, mask=mask)


@triton.jit
def textbook(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    """σ² = E[x²] − E[x]² (clamped at 0): cancels on the large-offset rows."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    var = tl.maximum(tl.sum(x * x, axis=0) / n - mean * mean, 0.0)
    rstd = tl.rsqrt(var + eps)
    g = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
    b = tl.load(beta_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, (x - mean) * rstd * g + b, mask=mask)


@triton.jit
def padding_squared(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    """x − mean squared in every lane, the padded ones (−mean) included."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = x - mean
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n + eps)
    g = tl.load(gamma_ptr + cols, mask=mask, other=0.0)
    b = tl.load(beta_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, d * rstd * g + b, mask=mask)


@triton.jit
def no_affine(x_ptr, gamma_ptr, beta_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    """Normalises and stops: γ and β never applied."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n + eps)
    tl.store(y_ptr + row * n + cols, d * rstd, mask=mask)


KERNELS = {"right": right, "textbook": textbook, "padding_squared": padding_squared,
           "no_affine": no_affine}


def launcher(name: str, fixed_block: int | None = None):
    """``layernorm_triton(x, gamma, beta, eps, y)`` running kernel ``name``, one program per row,
    with a block of the next power of two at or above n, or ``fixed_block`` columns (the bug of
    a block that covers only the first columns of a long row)."""
    kernel = KERNELS[name]

    def layernorm_triton(x, gamma, beta, eps, y):
        rows, n = x.shape
        block = fixed_block or triton.next_power_of_2(n)
        kernel[(rows,)](view(x), view(gamma), view(beta), view(y), n, eps, BLOCK=block,
                        num_warps=min(16, max(1, block // 512)))
    return layernorm_triton
