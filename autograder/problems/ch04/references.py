"""Chapter 4's reference kernels: the two-kinds work grouped by kind (the speed test's
reference), in the original order, and with the lanes interleaved across the kinds (for
`aag bench`)."""

from __future__ import annotations

from autograder.problems.kit.kernels import KernelCache

cuda = float32 = None     # numba.cuda and numba.float32, bound by KernelCache on first use
_kernels = KernelCache(globals(), "cuda", "float32")


@_kernels.lazy
def reference_uniform():
    """The speed test's reference: grouped elements, float32 arithmetic, one thread per element."""
    @cuda.jit
    def uniform_reference(x_sorted, kind_sorted, order, a, b, out):
        t = cuda.grid(1)
        if t < x_sorted.size:
            xt = x_sorted[t]
            if kind_sorted[t] == 0:
                acc = float32(0)
                for k in range(a.size):
                    acc = acc * xt + a[k]
            else:
                acc = float32(1)
                for k in range(b.size):
                    acc *= float32(1) + b[k] * xt
            out[order[t]] = acc
    return uniform_reference


@_kernels.lazy
def reference_divergent():
    """The same arithmetic on the original order (for `aag bench` and the lead's calibration:
    its time over reference_uniform's is the cost of divergence)."""
    @cuda.jit
    def divergent_reference(x, kind, a, b, out):
        i = cuda.grid(1)
        if i < x.size:
            xi = x[i]
            if kind[i] == 0:
                acc = float32(0)
                for k in range(a.size):
                    acc = acc * xi + a[k]
            else:
                acc = float32(1)
                for k in range(b.size):
                    acc *= float32(1) + b[k] * xi
            out[i] = acc
    return divergent_reference


@_kernels.lazy
def reference_interleaved():
    """The speed test's inputs and launch, but the even lanes of a warp take sorted elements from
    the first half and the odd lanes from the second half: with kinds half and half, every warp
    holds both kinds and diverges. Correct (a bijection t -> s), for `aag bench`: its time over
    the reference's is the cost of divergence on the same data, the number the speed bar's
    min_fraction_of_reference must sit above."""
    @cuda.jit
    def interleaved(x_sorted, kind_sorted, order, a, b, out):
        t = cuda.grid(1)
        n = x_sorted.size
        if t < n:
            s = t // 2 if t % 2 == 0 else (n + 1) // 2 + t // 2
            xs = x_sorted[s]
            if kind_sorted[s] == 0:
                acc = float32(0)
                for k in range(a.size):
                    acc = acc * xs + a[k]
            else:
                acc = float32(1)
                for k in range(b.size):
                    acc *= float32(1) + b[k] * xs
            out[order[s]] = acc
    return interleaved
