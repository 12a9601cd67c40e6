# bank: pieces of n // chunks elements each, so the n % chunks elements at the end are never processed (out keeps its NaN there); it must get no points.
# naive: none
@cuda.jit
def axpb_kernel(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b


def pipeline(x, out, a, b, chunks, streams):
    n = x.shape[0]
    size = n // chunks
    queues = [cuda.stream() for _ in range(streams)]
    for i in range(chunks):
        lo, hi = i * size, (i + 1) * size
        q = queues[i % streams]
        d = cuda.to_device(x[lo:hi], stream=q)
        r = cuda.device_array(hi - lo, np.float32)
        axpb_kernel[(hi - lo + 127) // 128 + 1, 128, q](d, r, a, b)
        r.copy_to_host(out[lo:hi], stream=q)
    cuda.synchronize()
