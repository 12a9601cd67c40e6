# bank: correct: the launcher reads x.size, x.shape and len(x), and launches the kernel on host-made slices of the arrays (x[:n], y[:n], out[:n]): views of device arrays, not copies, so it must get full marks.
# naive: none
@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)
    if i < c.shape[0]:
        c[i] = a[i] + b[i]


def add_vectors(x, y, out):
    n = len(x)
    assert x.size == n and x.shape == (n,)
    threads = 64
    add_kernel[(n + threads - 1) // threads, threads](x[:n], y[:n], out[:n])
