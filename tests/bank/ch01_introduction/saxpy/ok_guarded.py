# bank: one thread per element, out[i] = a * x[i] + y[i] under `if i < out.size`; correct, full marks.
# naive: none
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
