# bank: correct in two launches: the first kernel stores x[i] + y[i] into a device scratch array it allocates, the second copies the scratch into `out`; both kernels are the learner's, the host never touches the values, so it must get full marks.
# naive: none
@cuda.jit
def add_into(x, y, tmp):
    i = cuda.grid(1)
    if i < tmp.size:
        tmp[i] = x[i] + y[i]


@cuda.jit
def copy_out(tmp, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = tmp[i]


def add_vectors(x, y, out):
    n = len(x)
    tmp = cuda.device_array(x.shape, dtype=x.dtype)
    blocks = (n + 127) // 128
    add_into[blocks, 128](x, y, tmp)
    copy_out[blocks, 128](tmp, out)
