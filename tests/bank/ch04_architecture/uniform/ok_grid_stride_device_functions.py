# bank: a grid-stride loop over the sorted elements (one pass with the check's launch), the forms as device functions, the destination read first; correct, full marks.
# naive: none
@cuda.jit(device=True)
def power_form(a, x):
    acc = 0.0
    for c in a:
        acc = acc * x + c
    return acc


@cuda.jit(device=True)
def product_form(b, x):
    acc = 1.0
    for c in b:
        acc *= 1.0 + c * x
    return acc


@cuda.jit
def uniform_kernel(x_sorted, kind_sorted, order, a, b, out):
    for t in range(cuda.grid(1), x_sorted.shape[0], cuda.gridsize(1)):
        dest = order[t]
        if kind_sorted[t] == 1:
            out[dest] = product_form(b, x_sorted[t])
        else:
            out[dest] = power_form(a, x_sorted[t])
