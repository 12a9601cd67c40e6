# bank: the kernel computes a * x and forgets b, otherwise a correct pipeline; it must get no points.
# naive: none
@cuda.jit
def axpb_kernel(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def pipeline(x, out, a, b, chunks, streams):
    n = x.shape[0]
    queues = [cuda.stream() for _ in range(streams)]
    for i in range(chunks):
        lo, hi = i * n // chunks, (i + 1) * n // chunks
        q = queues[i % streams]
        d = cuda.to_device(x[lo:hi], stream=q)
        r = cuda.device_array(hi - lo, np.float32)
        axpb_kernel[(hi - lo + 127) // 128, 128, q](d, r, a, b)
        r.copy_to_host(out[lo:hi], stream=q)
    cuda.synchronize()
