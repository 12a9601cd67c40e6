# bank: creates only min(streams, chunks) streams, records an event after each piece's copy back and waits on the events after the loop, computes b + x * a (the same two float32 roundings in another order) with its own bounds check on out; it must get full marks.
# naive: none
@cuda.jit
def axpb_kernel(x, out, a, b):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.shape[0]:
        out[i] = b + x[i] * a


def pipeline(x, out, a, b, chunks, streams):
    n = x.size
    queues = [cuda.stream() for _ in range(min(streams, chunks))]
    done = []
    for i in range(chunks):
        lo = (i * n) // chunks
        hi = ((i + 1) * n) // chunks
        q = queues[i % len(queues)]
        d = cuda.to_device(x[lo:hi], stream=q)
        r = cuda.device_array_like(d)
        axpb_kernel[(hi - lo + 31) // 32, 32, q](d, r, a, b)
        r.copy_to_host(out[lo:hi], stream=q)
        e = cuda.event()
        e.record(q)
        done.append((e, d, r))
    for e, _, _ in done:
        e.synchronize()
