# bank: the notebook's design: each stream owns device buffers as long as the longest piece, reused through slices; piece i's copy in, kernel and copy back queued on stream i % streams; one wait at the end; it must get full marks.
# naive: none
@cuda.jit
def axpb_kernel(x, out, a, b):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b


def pipeline(x, out, a, b, chunks, streams):
    n = x.shape[0]
    longest = (n + chunks - 1) // chunks
    queues = [cuda.stream() for _ in range(streams)]
    d_in = [cuda.device_array(longest, np.float32) for _ in range(streams)]
    d_out = [cuda.device_array(longest, np.float32) for _ in range(streams)]
    for i in range(chunks):
        lo, hi = i * n // chunks, (i + 1) * n // chunks
        s = i % streams
        m = hi - lo
        d_in[s][:m].copy_to_device(x[lo:hi], stream=queues[s])
        axpb_kernel[(m + 255) // 256, 256, queues[s]](d_in[s][:m], d_out[s][:m], a, b)
        d_out[s][:m].copy_to_host(out[lo:hi], stream=queues[s])
    cuda.synchronize()
