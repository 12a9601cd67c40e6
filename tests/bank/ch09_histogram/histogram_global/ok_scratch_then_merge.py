# bank: correct in two launches of the learner's own kernels: the first counts into a device scratch histogram it allocates (global atomics), the second adds the scratch into `hist`; the host only allocates, so it must get full marks.
# naive: none
@cuda.jit
def _count(data, scratch):
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(scratch, data[i], 1)


@cuda.jit
def _merge(scratch, hist):
    b = cuda.grid(1)
    if b < hist.size:
        cuda.atomic.add(hist, b, scratch[b])


class _TwoKernels:
    def __getitem__(self, launch_config):
        blocks, threads = launch_config[0], launch_config[1]

        def run(data, hist):
            scratch = cuda.to_device(np.zeros(256, dtype=np.uint32))
            _count[blocks, threads](data, scratch)
            _merge[1, 256](scratch, hist)
        return run


histogram_global_kernel = _TwoKernels()
