# bank: chapter 9.1's grid-stride kernel handed in for 9.2: one cuda.atomic.add on global `hist` per byte, no private copy in shared memory; the counts are right, so a check of the values alone passes it, but the exercise asks for privatization: CPU mode sees no shared-memory atomics and fails it with a plain verdict (on a GPU the speed cell fails it); it must lose the points.
# naive: allclose
@cuda.jit
def histogram_private_kernel(data, hist):
    for i in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(hist, data[i], 1)
