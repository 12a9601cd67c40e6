# bank: a new device array per piece with cuda.to_device(..., stream=) and device_array(..., stream=), a grid-stride kernel of 2 blocks, pieces from divmod (the first n % chunks one longer), every stream synchronized at the end; it must get full marks.
# naive: none
@cuda.jit
def axpb_kernel(x, out, a, b):
    i = cuda.grid(1)
    while i < x.size:
        out[i] = a * x[i] + b
        i += cuda.gridsize(1)


def pipeline(x, out, a, b, chunks, streams):
    n = x.shape[0]
    base, extra = divmod(n, chunks)
    queues = [cuda.stream() for _ in range(streams)]
    keep = []
    lo = 0
    for i in range(chunks):
        hi = lo + base + (1 if i < extra else 0)
        q = queues[i % streams]
        d_x = cuda.to_device(x[lo:hi], stream=q)
        d_y = cuda.device_array(hi - lo, dtype=np.float32, stream=q)
        axpb_kernel[2, 64, q](d_x, d_y, a, b)
        d_y.copy_to_host(out[lo:hi], stream=q)
        keep.append((d_x, d_y))
        lo = hi
    for q in queues:
        q.synchronize()
