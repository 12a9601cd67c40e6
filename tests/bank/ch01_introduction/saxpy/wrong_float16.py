# bank: does the arithmetic in float16 (about 3 decimal digits), far outside float32 rounding; it must lose the points.
# naive: none
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = np.float16(a) * np.float16(x[i]) + np.float16(y[i])
