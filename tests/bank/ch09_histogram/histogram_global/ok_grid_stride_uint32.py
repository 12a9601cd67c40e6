# bank: a grid-stride loop (so any grid works), the bin as an int and an explicit np.uint32 increment; correct, full marks.
# naive: none
@cuda.jit
def histogram_global_kernel(data, hist):
    for i in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        b = int(data[i])
        cuda.atomic.add(hist, b, np.uint32(1))
