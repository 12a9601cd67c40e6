# bank: one element per thread, as in earlier chapters: with a quarter of the threads, three quarters of out keep their NaN; it must get no points.
# naive: none
@cuda.jit
def ilp_kernel(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b
