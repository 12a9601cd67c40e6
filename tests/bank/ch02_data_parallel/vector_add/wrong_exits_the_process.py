# bank: the launcher calls os._exit(0) once the kernel is launched, ending whatever process runs it (in a grader without a separate process this ends the grading of everything after it); it must lose its points, and the other submissions in the same autograde run must be graded normally.
# naive: none
import os


@cuda.jit
def _add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def add_vectors(x, y, out):
    _add[(out.size + 127) // 128, 128](x, y, out)
    os._exit(0)
