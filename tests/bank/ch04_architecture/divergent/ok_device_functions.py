# bank: the two forms as device functions with float64 accumulators (0.0 and the int 1), an explicit index and an early return; correct, full marks.
# naive: none
@cuda.jit(device=True)
def power_form(a, x):
    acc = 0.0
    for k in range(a.size):
        acc = acc * x + a[k]
    return acc


@cuda.jit(device=True)
def product_form(b, x):
    acc = 1
    for k in range(b.size):
        acc = acc * (1 + b[k] * x)
    return acc


@cuda.jit
def divergent_kernel(x, kind, a, b, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= out.size:
        return
    if kind[i]:
        out[i] = product_form(b, x[i])
    else:
        out[i] = power_form(a, x[i])
