# bank: the addition in a @cuda.jit(device=True) helper called by the kernel, tuple launch configuration; correct, full marks.
# naive: none
@cuda.jit(device=True)
def add_one(a, b):
    return a + b


@cuda.jit
def vector_add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = add_one(x[i], y[i])


def add_vectors(x, y, out):
    threads = 128
    blocks = -(-out.size // threads)          # ceiling division
    vector_add_kernel[(blocks,), (threads,)](x, y, out)
