# bank: computes a * y[i] + x[i] (x and y swapped); it must lose the points.
# naive: none
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * y[i] + x[i]
