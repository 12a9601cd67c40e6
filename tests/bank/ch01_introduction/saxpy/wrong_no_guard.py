# bank: no bounds check, so the spare threads of the last block index past the end (an IndexError in CPU mode, a stray write on a GPU); it must lose the points.
# naive: none
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    out[i] = a * x[i] + y[i]
