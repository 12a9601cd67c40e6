# bank: 32-thread blocks from a module-level constant, a helper for the block count, a debug print in the launcher and in the kernel (thread 0 only) and a warning for tiny inputs; noise on stdout and stderr must not cost points, so full marks.
# naive: none
import warnings

THREADS = 32


def blocks_for(n):
    return (n + THREADS - 1) // THREADS


@cuda.jit
def add_kernel(x, y, out):
    i = cuda.grid(1)
    if i == 0:
        print("kernel started, first element", x[0] + y[0])
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    print("launching", blocks_for(out.size), "blocks of", THREADS, "threads for", out.size, "elements")
    if out.size < THREADS:
        warnings.warn("fewer elements than threads in one block: most threads will idle")
    add_kernel[blocks_for(out.size), THREADS](x, y, out)
