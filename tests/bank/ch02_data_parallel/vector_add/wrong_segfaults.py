# bank: the launcher dereferences a null pointer through ctypes after launching a correct kernel, so the process running it dies with SIGSEGV; it must lose its points, the verdict must say the process crashed, and the other submissions in the same autograde run must be graded normally.
# naive: none
import ctypes


@cuda.jit
def _add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    _add[(out.size + 127) // 128, 128](x, y, out)
    ctypes.string_at(0)
